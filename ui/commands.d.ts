// Hand-written from the `#[tauri::command]` signatures in src-tauri/src/commands/ (registered in
// src-tauri/src/main.rs) and the events Rust emits: what api.js's `invoke` and `listen` accept.
// The payloads are the generated types. Arguments go by their Rust names: every command is
// `rename_all = "snake_case"`. An `Option` argument may be null or left out.
import type * as T from "./types";

export interface Commands {
  connection_rights: { args: {}; returns: T.Rights };
  connection_info: { args: {}; returns: T.ConnectionInfo };
  connect: { args: { profile?: string | null }; returns: T.ConnectionInfo };
  list_profiles: { args: {}; returns: Array<T.NamedProfile> };
  save_profile: { args: { form: T.ProfileForm }; returns: T.ProfileSaved };
  delete_profile: { args: { name: string }; returns: Array<string> };
  test_profile: { args: { name: string }; returns: T.Probe };
  attach_propose: { args: { target: T.AttachTarget }; returns: T.Proposed };
  attach_preview: { args: { target: T.AttachTarget; form: T.ProposalForm }; returns: T.Previewed };
  attach_save: {
    args: { target: T.AttachTarget; form: T.ProposalForm; profile: T.AttachProfile; reason: string };
    returns: T.Attached;
  };
  drift_chart: {
    args: { products: Array<T.ProductId>; labels: T.ChartLabels; width: number; height: number };
    returns: string;
  };
  export_drift_png: {
    args: { products: Array<T.ProductId>; labels?: T.ChartLabels | null; path?: string | null };
    returns: string;
  };
  run_ledger: { args: {}; returns: T.LedgerReport };
  rewrite_products: {
    args: { products: Array<number>; reason: string; dry_run: boolean; confirmed: Array<number> };
    returns: Array<T.RewriteItem>;
  };
  audit_log: { args: { filter: T.AuditFilter }; returns: Array<T.AuditRecord> };
  timeline_read: { args: { product?: T.ProductId | null; minutes: number; limit: number }; returns: T.Timeline };
  alerts_current: { args: {}; returns: T.AlertsUpdate | null };
  alert_acknowledge: {
    args: { key: string; reason: string; minutes?: number | null };
    returns: T.AlertAcknowledgement;
  };
  set_language: { args: { lang: T.Lang }; returns: null };
  compensation_list: { args: { status?: T.CaseStatus | null }; returns: Array<T.CaseSummary> };
  compensation_show: { args: { case_id: number }; returns: T.Case };
  compensation_open: { args: { product_id: T.ProductId }; returns: T.Opened };
  compensation_plan: {
    args: { case_id: number; oversold?: T.Action | null; withdrawn?: T.Action | null; coupon_cents?: number | null; note: string };
    returns: T.Planned;
  };
  compensation_step: { args: { case_id: number; step: T.StepKind; reason: string }; returns: T.Stepped };
  compensation_execute: { args: { case_id: number; confirm: number }; returns: T.Execution };
  compensation_export: { args: { case_id: number; path?: string | null }; returns: string };
  degrade_status: { args: {}; returns: T.SwitchStatus };
  degrade_on: { args: { product?: number | null; reason: string }; returns: T.Toggled };
  degrade_exit: {
    args: { product?: number | null; reason: string; confirm?: string | null };
    returns: T.ExitReport;
  };
  drill_catalog: { args: {}; returns: T.DrillCatalog };
  drill_start: {
    args: { drill: string; short?: number | null; extra_db_latency_ms: number; staging_confirmed: boolean };
    returns: T.Started;
  };
  drill_watch: { args: { run_id: number }; returns: null };
  drill_halt: { args: { reason: string }; returns: Array<number> };
  drill_runs: { args: { limit: number }; returns: Array<T.RunRecord> };
  drill_report: { args: { run_id: number; lang: T.Lang }; returns: string };
  drill_compare: { args: { a: number; b: number; threshold: number }; returns: T.Comparison };
  drill_timeline: { args: { run_id: number }; returns: T.DrillTimeline };
  burndown_chart: {
    args: { product?: number | null; labels: T.ChartLabels; series: string; width: number; height: number };
    returns: T.BurnDownView;
  };
}

/** The arguments after the command's name: none for a command that takes none. */
export type InvokeArgs<C extends keyof Commands> = keyof Commands[C]["args"] extends never
  ? []
  : [args: Commands[C]["args"]];

/** Events by name, with their payloads (src-tauri/src/board_feed.rs, commands/). */
export interface Events {
  "board-tick": T.BoardTick;
  "board-error": string;
  "ledger-progress": T.LedgerProgress;
  "compensation-progress": T.CompensationProgress;
  "degrade-ack": T.Acknowledgement;
  "degrade-step": T.ExitStep;
  "drill-live": T.DrillLive;
  alerts: T.AlertsUpdate;
  "open-product": T.OpenProduct;
  "overview-tick": T.Overview;
  "overview-error": string;
}
