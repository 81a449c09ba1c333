import os from 'node:os';

/** Where the numbers were measured. */
export interface MachineInfo {
  readonly os: string;
  readonly cpuModel: string;
  readonly cpus: number;
  readonly memoryGiB: number;
  readonly node: string;
  readonly postgres: string;
  readonly packages: Readonly<Record<string, string>>;
}

export function machineInfo(postgres: string, packages: Record<string, string>): MachineInfo {
  const cpus = os.cpus();
  return {
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cpus: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    postgres,
    packages,
  };
}

/** One line of the summary: a figure, what it is compared with, and the target if there is one. */
export interface Row {
  readonly figure: string;
  readonly value: string;
  readonly baseline: string;
  /** value / baseline, or null when there is no baseline (or it was not measured). */
  readonly ratio: number | null;
  readonly target: string;
  /** null: no target, or not measured. */
  readonly met: boolean | null;
  /** The bench section that measured it (`BENCH_SECTIONS`' names). */
  readonly section?: string;
  /** The machine's 1-min load average when that section started. */
  readonly load?: number;
}

/** The rows, each marked with the section that measured it. */
export function inSection(section: string, rows: readonly Row[]): Row[] {
  return rows.map((r) => ({ ...r, section }));
}

/**
 * Each row beside the load its section started at; a row whose section started above `maxLoad` (BENCH_MAX_LOAD) is
 * not written: other work competed for the machine, and its figure says more about that work than about the service.
 * What was measured stays in results.json.
 */
export function gateByLoad(rows: readonly Row[], loads: Readonly<Record<string, number>>, maxLoad: number): Row[] {
  return rows.map((r) => {
    const load = r.section === undefined ? undefined : loads[r.section];
    if (load === undefined) return r;
    if (load <= maxLoad) return { ...r, load };
    return { ...r, load, value: `not written: load ${load.toFixed(2)} > ${maxLoad} (BENCH_MAX_LOAD)`, ratio: null, met: null };
  });
}

export function ratioRow(
  figure: string,
  value: number | null,
  unit: string,
  baselineName: string,
  baseline: number | null,
  minRatio: number | null,
): Row {
  const ratio = value !== null && baseline !== null && baseline > 0 ? value / baseline : null;
  return {
    figure,
    value: value === null ? 'n/a' : `${fmt(value)} ${unit}`,
    baseline: !baselineName ? '' : baseline === null ? `${baselineName}: n/a` : `${baselineName}: ${fmt(baseline)} ${unit}`,
    ratio,
    target: minRatio === null ? '' : `≥ ${minRatio}×`,
    met: minRatio === null || ratio === null ? null : ratio >= minRatio,
  };
}

/** A figure judged against an absolute bound (latency, memory). */
export function boundRow(figure: string, value: string, target: string, met: boolean | null, baseline = ''): Row {
  return { figure, value, baseline, ratio: null, target, met };
}

export function fmt(n: number): string {
  if (n >= 100) return Math.round(n).toLocaleString('en-US');
  if (n >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

export function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Two decimals, rounded down, so that a ratio shown as 0.70× never hides one just under a 0.7× target. */
const ratioText = (ratio: number) => `${(Math.floor(ratio * 100 + 1e-9) / 100).toFixed(2)}×`;

const verdict = (met: boolean | null) => (met === null ? '' : met ? 'met' : 'NOT met');

export function renderReport(machine: MachineInfo, rows: readonly Row[], notes: readonly string[]): string {
  const head = [
    `## otp-service benchmark`,
    '',
    `Machine: ${machine.cpuModel}, ${machine.cpus} CPUs, ${machine.memoryGiB} GiB RAM, ${machine.os}; ` +
      `Node ${machine.node}; ${machine.postgres}`,
    `Packages: ${Object.entries(machine.packages)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    '',
  ];
  const table = markdownTable(
    ['Figure', 'Value', 'Baseline', 'Ratio', 'Target', 'Result', 'Load'],
    rows.map((r) => [r.figure, r.value, r.baseline, r.ratio === null ? '' : ratioText(r.ratio), r.target, verdict(r.met), r.load === undefined ? '' : r.load.toFixed(2)]),
  );
  return [...head, table, '', ...notes.map((n) => `- ${n}`), ''].join('\n');
}
