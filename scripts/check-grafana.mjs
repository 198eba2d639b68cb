// The shipped Grafana dashboards (deploy/grafana/*.json) against Grafana's own schema: the
// TypeScript types of `@grafana/schema` (pinned in package-lock.json), which Grafana generates
// from its CUE kinds: the dashboard kind, and each panel plugin's options and field config.
//
// Each JSON file is checked as a TypeScript object literal, `(<the file>) satisfies Checked`,
// compiled in memory (nothing written). A literal, not an imported JSON module: only a literal
// gets TypeScript's excess-property check (a misspelt field fails) and keeps its string
// literals (a `"type": "datasource"` is checked against the variable types Grafana knows).
// Errors are reported at the JSON file's own lines. `make test` runs it after the front end's
// type check, which installs the npm packages.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const folder = join(root, 'deploy', 'grafana');

// `Panel` leaves a panel's `options` and a query's fields open (they belong to plugins); the
// panel types this repository uses are narrowed to their plugin's schema below. A dashboard
// with a panel type not listed here fails: add the plugin's panelcfg types.
const header = `import type { Dashboard, DataQuery, Panel, RowPanel } from '@grafana/schema';
import type * as TimeSeries from '@grafana/schema/dist/esm/raw/composable/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen';
import type * as Stat from '@grafana/schema/dist/esm/raw/composable/stat/panelcfg/x/StatPanelCfg_types.gen';
import type * as Table from '@grafana/schema/dist/esm/raw/composable/table/panelcfg/x/TablePanelCfg_types.gen';
/** A query: Grafana's common fields (refId, hide, datasource) checked; the rest (Prometheus's expr, legendFormat, format, instant) is the data source plugin's, open in Grafana's schema too. */
type Target = DataQuery & Record<string, unknown>;
/** A panel of plugin \`T\`: its options and custom field config are that plugin's, each field optional (Grafana fills in the plugin's defaults). */
type PanelOf<T extends string, O, F> = Omit<Panel<Partial<O>, Partial<F>>, 'type' | 'options' | 'targets'> & { type: T; options?: Partial<O>; targets?: Target[] };
type KnownPanel = PanelOf<'timeseries', TimeSeries.Options, TimeSeries.FieldConfig> | PanelOf<'stat', Stat.Options, {}> | PanelOf<'table', Table.Options, {}>;
/** Grafana's "export for sharing externally" wrapper: the data sources the importer is asked to pick. Not part of the dashboard kind; Grafana's import reads it. */
type Shared = { __inputs?: Array<{ name: string; label: string; description?: string; type: 'datasource'; pluginId: string; pluginName: string }>; __requires?: Array<{ type: string; id: string; name: string; version: string }> };
type Checked = Omit<Dashboard, 'panels'> & Shared & { panels?: Array<KnownPanel | RowPanel> };
export const dashboard = (
`;
const footer = `\n) satisfies Checked;\n`;
const headerLines = header.split('\n').length - 1;

const options = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ES2022,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  strict: true,
  noEmit: true,
  types: [],
};

const files = readdirSync(folder).filter((f) => f.endsWith('.json')).map((f) => join(folder, f));
if (files.length === 0) {
  console.error(`check-grafana: no dashboard in ${folder}`);
  process.exit(1);
}

let failed = 0;
for (const file of files) {
  const json = readFileSync(file, 'utf8');
  JSON.parse(json); // a syntax error is reported as JSON's, not TypeScript's
  // Beside the JSON, so that `@grafana/schema` resolves from the repository's node_modules.
  const virtual = file.replace(/\.json$/, '.schema-check.ts');
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, ...rest) =>
    name === virtual
      ? ts.createSourceFile(name, header + json + footer, version)
      : getSourceFile(name, version, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === virtual || fileExists(name);
  const program = ts.createProgram([virtual], options, host);
  const diagnostics = ts.getPreEmitDiagnostics(program);
  for (const d of diagnostics) {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    if (d.file && d.start !== undefined) {
      const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
      const where =
        d.file.fileName === virtual && line >= headerLines
          ? `${file.slice(root.length + 1)}:${line - headerLines + 1}:${character + 1}`
          : `${d.file.fileName}:${line + 1}:${character + 1}`;
      console.error(`${where}: ${message}`);
    } else {
      console.error(message);
    }
  }
  failed += diagnostics.length ? 1 : 0;
  if (!diagnostics.length) {
    const version = JSON.parse(readFileSync(join(root, 'node_modules/@grafana/schema/package.json'), 'utf8')).version;
    console.log(`check-grafana: ${file.slice(root.length + 1)} satisfies Grafana's schema (@grafana/schema ${version})`);
  }
}
process.exit(failed ? 1 : 0);
