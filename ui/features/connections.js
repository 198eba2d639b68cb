// Connections: saved profiles, created, edited, tested, deleted and connected to.
// Passwords are sent once, with a save, and never come back.
import { invoke } from "../api.js";
import { t, onLanguageChange } from "../i18n.js";
import { showError, showNotice, clearFeedback, cell } from "../feedback.js";
import { connect, connection } from "../session.js";
import { byId, query } from "../dom.js";

/** @typedef {import("../types").NamedProfile} NamedProfile */
/** @typedef {import("../types").EnvironmentKind} EnvironmentKind */
/** @typedef {import("../types").Role} Role */
/** @typedef {import("../main.js").ScreenContext} ScreenContext */

/** The profile form's `elements`. @typedef {HTMLFormControlsCollection & ProfileFieldsByName} ProfileFields */
/**
 * The profile form's fields, by their names in index.html.
 * @typedef {object} ProfileFieldsByName
 * @property {HTMLInputElement} name
 * @property {HTMLSelectElement} environment
 * @property {HTMLSelectElement} role
 * @property {HTMLInputElement} readOnly
 * @property {HTMLInputElement} mysqlUrl
 * @property {HTMLInputElement} mysqlReplicaUrl
 * @property {HTMLInputElement} redisUrl
 * @property {HTMLInputElement} keyPrefix
 * @property {HTMLInputElement} alertBacklog
 * @property {HTMLInputElement} alertBreakers
 * @property {HTMLInputElement} mysqlPassword
 * @property {HTMLInputElement} mysqlReplicaPassword
 * @property {HTMLInputElement} redisPassword
 * @property {HTMLInputElement} redisCa
 * @property {HTMLInputElement} redisCert
 * @property {HTMLInputElement} redisKey
 * @property {HTMLSelectElement} mysqlSslMode
 * @property {HTMLInputElement} mysqlCa
 * @property {HTMLInputElement} mysqlCert
 * @property {HTMLInputElement} mysqlKey
 */

const form = /** @type {HTMLFormElement} */ (byId("profile-form"));
const PASSWORDS = /** @type {const} */ (["mysqlPassword", "mysqlReplicaPassword", "redisPassword"]);
const tbody = query("#profiles tbody");
/** @type {NamedProfile[]} */
let profiles = [];
/** @type {ScreenContext} */
let ctx;

/**
 * @param {import("../i18n.js").MessageKey} label the i18n key of its text
 * @param {string} className
 * @param {(e: MouseEvent) => void} onClick
 */
function button(label, className, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = t(label);
  b.className = className;
  b.addEventListener("click", onClick);
  return b;
}

function render() {
  const active = connection()?.profile;
  tbody.replaceChildren(
    ...profiles.map((p) => {
      const tr = document.createElement("tr");
      tr.dataset.profile = p.name;
      tr.className = `env-${p.environment}`;
      const envCell = cell(t(p.environment) + (p.read_only ? ` · ${t("readOnly")}` : ""), "env");
      const actions = document.createElement("td");
      actions.className = "actions";
      actions.append(
        button("connectBtn", "connect", () => run(async () => {
          await connect(p.name);
          // The board follows a connect only if the person is still here: a screen opened
          // meanwhile (the banner turns before the account's rights are read) stays open.
          if (!byId("screen-connections").hidden) ctx.showScreen("board");
        })),
        button("edit", "edit", () => fill(p)),
        button("test", "test", () => run(async () => {
          const probe = await invoke("test_profile", { name: p.name });
          showNotice(() => t("probeOk", {
            name: p.name, mysql: probe.mysql_ms.toFixed(1), redis: probe.redis_ms.toFixed(1), version: probe.mysql_version,
          }));
        })),
        button("delete", "delete", (e) => {
          const b = /** @type {HTMLButtonElement} */ (e.currentTarget);
          // Two steps: the first click asks, the second deletes.
          if (!b.classList.contains("armed")) {
            b.classList.add("armed");
            b.textContent = t("confirmDelete");
            return;
          }
          run(async () => {
            const notices = await invoke("delete_profile", { name: p.name });
            // The list first, then the notice: when it says "deleted", the row is gone.
            await load();
            showNotice(() => [t("deleted", { name: p.name }), ...notices].join(" "));
          });
        }),
      );
      tr.append(
        cell(p.name + (p.name === active ? ` (${t("active")})` : ""), "name"),
        envCell,
        cell(t(p.role)),
        cell(p.mysql_url + (p.mysql_replica_url ? ` + ${p.mysql_replica_url}` : ""), "url"),
        cell(p.redis_url, "url"),
        cell(p.key_prefix, "url"),
        cell(passwordsOf(p), "passwords"),
        actions,
      );
      return tr;
    }),
  );
}

/**
 * Where a profile's passwords come from: the keychain, or its environment variables.
 * @param {NamedProfile} p
 */
function passwordsOf(p) {
  const said = [
    ...(p.secrets ?? []).map((slot) => `${slot} (${t("inKeychain")})`),
    ...(p.passwords_from_env ?? []).map((slot) => `${slot} (${t("fromEnv")})`),
  ];
  return said.length ? said.join(", ") : t("none");
}

/**
 * Where a save left a profile's passwords, said: nothing when the keychain took them (or
 * none was given); otherwise the variables that give them when it connects, and why.
 * @param {import("../types").SavedPasswords} passwords
 */
export function passwordsSaid(passwords) {
  const vars = passwords.from_env.map((e) => e.env_var).join(", ");
  if (!vars) return "";
  return [...(passwords.no_keychain ? [t("noKeychainHere")] : []), t("passwordsFromEnv", { vars })].join(" ");
}

/** @param {NamedProfile} p */
function fill(p) {
  const f = /** @type {ProfileFields} */ (form.elements);
  f.name.value = p.name;
  f.environment.value = p.environment;
  f.role.value = p.role;
  f.readOnly.checked = p.read_only;
  f.mysqlUrl.value = p.mysql_url;
  f.mysqlReplicaUrl.value = p.mysql_replica_url ?? "";
  f.redisUrl.value = p.redis_url;
  f.keyPrefix.value = p.key_prefix;
  // A profile with the default thresholds does not store them: the form's defaults apply.
  f.alertBacklog.value = String(p.thresholds?.backlog_messages ?? f.alertBacklog.defaultValue);
  f.alertBreakers.value = String(p.thresholds?.breakers_open ?? f.alertBreakers.defaultValue);
  f.redisCa.value = p.tls?.redis?.ca ?? "";
  f.redisCert.value = p.tls?.redis?.cert ?? "";
  f.redisKey.value = p.tls?.redis?.key ?? "";
  f.mysqlSslMode.value = p.tls?.mysql?.ssl_mode ?? "";
  f.mysqlCa.value = p.tls?.mysql?.ca ?? "";
  f.mysqlCert.value = p.tls?.mysql?.cert ?? "";
  f.mysqlKey.value = p.tls?.mysql?.key ?? "";
  for (const pw of PASSWORDS) f[pw].value = "";
  const title = byId("profile-form-title");
  title.dataset.editing = p.name;
  title.textContent = t("editProfile", { name: p.name });
}

/** @param {() => Promise<void>} action */
async function run(action) {
  clearFeedback();
  try {
    await action();
  } catch (err) {
    showError(err);
  }
}

async function load() {
  // The rows are replaced when the list arrives: until then a click could land on a row
  // about to go (a delete armed on the old row would be lost). Screen readers and the
  // end-to-end test both wait for this to turn false.
  const table = /** @type {HTMLTableElement} */ (tbody.closest("table"));
  table.setAttribute("aria-busy", "true");
  try {
    profiles = await invoke("list_profiles");
    render();
  } finally {
    table.setAttribute("aria-busy", "false");
  }
}

/** @param {SubmitEvent} event */
async function save(event) {
  event.preventDefault();
  const f = /** @type {ProfileFields} */ (form.elements);
  /** @type {import("../types").ProfileForm} */
  const profile = {
    name: f.name.value,
    // None until the person picks one: the core says so rather than guess.
    environment: f.environment.value ? /** @type {EnvironmentKind} */ (f.environment.value) : null,
    role: /** @type {Role} */ (f.role.value),
    read_only: f.readOnly.checked,
    mysql_url: f.mysqlUrl.value,
    mysql_replica_url: f.mysqlReplicaUrl.value || null,
    redis_url: f.redisUrl.value,
    key_prefix: f.keyPrefix.value,
    thresholds: { backlog_messages: Number(f.alertBacklog.value), breakers_open: Number(f.alertBreakers.value) },
    mysql_password: f.mysqlPassword.value || null,
    mysql_replica_password: f.mysqlReplicaPassword.value || null,
    redis_password: f.redisPassword.value || null,
    // The TLS files as paths on this machine; blank is none (the core checks they fit together).
    tls: {
      redis: { ca: f.redisCa.value || null, cert: f.redisCert.value || null, key: f.redisKey.value || null },
      mysql: {
        ssl_mode: f.mysqlSslMode.value ? /** @type {import("../types").SslMode} */ (f.mysqlSslMode.value) : null,
        ca: f.mysqlCa.value || null,
        cert: f.mysqlCert.value || null,
        key: f.mysqlKey.value || null,
      },
    },
  };
  await run(async () => {
    const saved = await invoke("save_profile", { form: profile });
    profiles = saved.profiles;
    // The passwords leave the window with the save: clear them at once.
    for (const pw of PASSWORDS) f[pw].value = "";
    showNotice(() => [t("saved", { name: profile.name }), passwordsSaid(saved.passwords)].join(" ").trim());
    render();
  });
}

/** @param {ScreenContext} context */
export function init(context) {
  ctx = context;
  form.addEventListener("submit", save);
  form.addEventListener("reset", () => {
    const title = byId("profile-form-title");
    delete title.dataset.editing;
    title.textContent = t("newProfile");
  });
  onLanguageChange(render);
}

export function show() {
  run(load);
}
