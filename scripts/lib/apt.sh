# Sourced by the set-up scripts: `apt_install PKG… [options]` installs Debian packages as root,
# running `apt-get update` once per script run. Uses the caller's `log` and `die`.
APT_UPDATED=0
apt_install() {
  command -v apt-get >/dev/null 2>&1 || die "need to install $* but apt-get is missing"
  [ "$(id -u)" = 0 ] || die "need root to apt-get install $*"
  if [ "$APT_UPDATED" = 0 ]; then
    log "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    APT_UPDATED=1
  fi
  log "apt-get install -y $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
