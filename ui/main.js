// The console window. All data comes from Rust commands; nothing is computed here.
import { invoke } from "./api.js";
import { t, toggleLanguage, applyTranslations } from "./i18n.js";

const tbody = document.querySelector("#products tbody");
const errorBox = document.getElementById("error");

function showError(err) {
  // Errors arrive typed: { kind, message }.
  errorBox.hidden = false;
  errorBox.textContent = `${t(err.kind ?? "error")}: ${err.message ?? String(err)}`;
}

function cell(text, className) {
  const td = document.createElement("td");
  td.textContent = text ?? "-";
  if (className) td.className = className;
  return td;
}

function renderProducts(readings) {
  tbody.replaceChildren(
    ...readings.map((r) => {
      const tr = document.createElement("tr");
      tr.dataset.productId = r.product_id;
      tr.className = `status-${r.status}`;
      tr.append(
        cell(r.product_id, "num"),
        cell(r.name, "name"),
        cell(r.status, "status"),
        cell(r.initial_stock, "num"),
        cell(r.db_stock, "num"),
        cell(r.live_orders_qty, "num"),
        cell(r.inflight_pending, "num"),
        cell(r.pending_release, "num"),
        cell(r.redis_stock, "num"),
        cell(r.expected_redis, "num"),
        cell(r.drift, "num drift"),
      );
      return tr;
    }),
  );
}

async function renderBanner() {
  const info = await invoke("connection_info");
  const banner = document.getElementById("banner");
  banner.className = `banner ${info.environment}`;
  document.getElementById("env-label").textContent = t(info.environment);
  document.getElementById("conn-detail").textContent =
    `${info.profile ?? "env"} · ${info.mysql} · ${info.redis} · ${info.keyPrefix} · ${t(info.role)}`;
  document.getElementById("read-only").hidden = !info.readOnly;
}

async function start() {
  applyTranslations();
  document.getElementById("lang-toggle").addEventListener("click", () => {
    toggleLanguage();
  });
  try {
    await renderBanner();
    renderProducts(await invoke("list_products"));
  } catch (err) {
    showError(err);
  }
}

start();
