import { PROVIDER_URL_SETTING, SETTINGS, type SettingSpec } from './settings.js';

/** One row of the settings reference, as `effectd config settings --json` prints it. */
export interface SettingReference {
  variable: string;
  flag?: string;
  type: string;
  unit?: string;
  /** The default as text (Markdown), or undefined when there is none. */
  default?: string;
  what: string;
  /** Set when effectd only passes it on (the OTLP exporter reads it itself). */
  readBy?: string;
}

/** The reference, in the table's order; the pattern variable EFFECTD_PROVIDER_<NAME>_URL after the paths. */
export function settingsReference(): SettingReference[] {
  const rows = Object.entries(SETTINGS).map(([variable, spec]) => row(variable, spec));
  const afterConfig = rows.findIndex((r) => r.variable === 'EFFECTD_CONFIG') + 1;
  rows.splice(afterConfig, 0, { variable: PROVIDER_URL_SETTING.name, type: PROVIDER_URL_SETTING.type, what: PROVIDER_URL_SETTING.what });
  return rows;
}

function row(variable: string, spec: SettingSpec<unknown>): SettingReference {
  const fallback = spec.defaultText ?? (spec.default !== undefined ? `\`${spec.default}\`` : undefined);
  return {
    variable,
    ...(spec.flag ? { flag: spec.flag } : {}),
    type: spec.type,
    ...(spec.unit ? { unit: spec.unit } : {}),
    ...(fallback ? { default: fallback } : {}),
    what: spec.what,
    ...(spec.readBy ? { readBy: spec.readBy } : {}),
  };
}

const cell = (text: string | undefined) => (text ?? '—').replace(/\n/g, ' ');

/** The reference as the Markdown table docs/configuration.md holds (between its settings markers). */
export function settingsMarkdown(): string {
  const header = '| variable | flag | type | unit | default | what |';
  const rule = '| --- | --- | --- | --- | --- | --- |';
  const lines = settingsReference().map((r) =>
    `| \`${r.variable}\` | ${cell(r.flag)} | ${cell(r.type)} | ${cell(r.unit)} | ${cell(r.default)} | ${r.what}${r.readBy ? ` (read by ${r.readBy})` : ''} |`);
  return [header, rule, ...lines].join('\n');
}

/** `effectd config settings --json`. */
export function settingsJson(): string {
  return `${JSON.stringify({ settings: settingsReference() }, null, 2)}\n`;
}
