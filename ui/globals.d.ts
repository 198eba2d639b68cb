// Hand-written: what the window has that is not ours, for the type check (`tsc -p .`,
// scripts/typecheck-ui.sh). Our types are generated from Rust (types.d.ts); our commands and
// events are in commands.d.ts.

/** An event as Tauri hands it to a listener. */
interface TauriEvent<T> {
  event: string;
  id: number;
  payload: T;
}

/** The parts of the Tauri v2 global API (`withGlobalTauri` in tauri.conf.json) the window uses. */
interface TauriGlobal {
  core: {
    /** Calls a Rust command; rejects with what the command's error serializes to. */
    invoke<T>(cmd: string, args?: Record<string, unknown>): Promise<T>;
  };
  event: {
    /** Listens to an event from Rust; resolves with the function that stops listening. */
    listen<T>(event: string, handler: (event: TauriEvent<T>) => void): Promise<() => void>;
  };
}

interface Window {
  /** Absent when the page is opened outside the app (in a plain browser). */
  __TAURI__?: TauriGlobal;
}
