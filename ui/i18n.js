// Chinese and English for every visible string.
const STRINGS = {
  en: {
    connecting: "Connecting…", readOnly: "read-only", products: "Products", product: "Product",
    name: "Name", status: "Status", initial: "Initial", dbStock: "DB stock", live: "Live orders",
    inflight: "In flight", release: "Pending release", redis: "Redis", expected: "Expected",
    drift: "Drift", production: "PRODUCTION", staging: "STAGING", sandbox: "SANDBOX",
    oncall: "on-call", approver: "approver", facilitator: "facilitator", viewer: "viewer",
    profile: "Profile error", connect: "Connection error", query: "Query error", error: "Error",
    langButton: "中文",
  },
  zh: {
    connecting: "连接中…", readOnly: "只读", products: "商品", product: "商品ID",
    name: "名称", status: "状态", initial: "初始库存", dbStock: "数据库库存", live: "有效订单",
    inflight: "在途", release: "待回补", redis: "Redis", expected: "应有值",
    drift: "偏差", production: "生产环境", staging: "预发环境", sandbox: "沙箱环境",
    oncall: "值班工程师", approver: "审批人", facilitator: "演练主持", viewer: "只读用户",
    profile: "配置错误", connect: "连接错误", query: "查询错误", error: "错误",
    langButton: "English",
  },
};

let lang = localStorage.getItem("stockguard.lang") ?? "en";

export function t(key) {
  return STRINGS[lang][key] ?? key;
}

export function applyTranslations() {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  for (const el of document.querySelectorAll("[data-i18n]")) {
    el.textContent = t(el.dataset.i18n);
  }
  document.getElementById("lang-toggle").textContent = t("langButton");
}

export function toggleLanguage() {
  lang = lang === "en" ? "zh" : "en";
  localStorage.setItem("stockguard.lang", lang);
  applyTranslations();
}
