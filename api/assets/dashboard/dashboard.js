// Openrail dashboard: the copy button of a new API key's secret. No dependencies.
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
