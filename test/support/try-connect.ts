import { connect } from 'node:net';

/** A fresh TCP connection to the URL's port: 'refused' once nothing listens there. */
export function tryConnect(url: string): Promise<'connected' | 'refused'> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNREFUSED' ? resolve('refused') : reject(error)));
  });
}
