// Openrail dashboard: the copy button of a new secret, a confirmation before a final
// action, and the reload of a page whose object waits for an answer. No dependencies.
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  const status = document.getElementById(button.dataset.copy + "-status");
  try {
    await navigator.clipboard.writeText(source.textContent.trim());
    if (status) status.textContent = "Copied to the clipboard.";
  } catch (e) {
    const range = document.createRange();
    range.selectNodeContents(source);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    if (status) status.textContent = "Selected: press Ctrl+C (or ⌘C) to copy.";
  }
});

// A form with data-confirm posts only once the person confirms (revoke, cancel). Without
// this script the form posts as it is.
document.addEventListener("submit", (event) => {
  const form = event.target.closest("form[data-confirm]");
  if (form && !window.confirm(form.dataset.confirm)) event.preventDefault();
});

// An element with data-refresh="ms" (a session being checked, an attestation on its way)
// reloads the page after that long; the page drops it once the answer is in.
const refresh = document.querySelector("[data-refresh]");
if (refresh) {
  const ms = Number(refresh.dataset.refresh) || 2000;
  setTimeout(() => window.location.reload(), ms);
}
