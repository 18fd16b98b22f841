import pg from 'pg';

/** Runs one statement on its own connection and answers the first column of the first row as text ('' when none). */
export async function pgScalar(connectionString: string, sql: string): Promise<string> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const result = await client.query(sql);
    return String(result.rows[0] ? Object.values(result.rows[0])[0] : '');
  } finally {
    await client.end();
  }
}
