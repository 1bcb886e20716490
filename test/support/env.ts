/**
 * Sets environment variables for a test (undefined deletes one) and returns what puts them back:
 * a variable that was not set is deleted again, never set to the string "undefined". Test files
 * share a worker's process, so what one file leaves in process.env the next one sees.
 */
export function setEnv(values: Readonly<Record<string, string | undefined>>): () => void {
  const saved = Object.keys(values).map((name) => [name, process.env[name]] as const);
  const put = (name: string, value: string | undefined) => {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  };
  for (const [name, value] of Object.entries(values)) put(name, value);
  return () => {
    for (const [name, value] of saved) put(name, value);
  };
}
