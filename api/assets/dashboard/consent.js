// Openrail hosted consent page: connect an EIP-1193 wallet (window.ethereum), ask it for
// eth_signTypedData_v4 of the typed data the server rendered, post the signature back.
(() => {
  const data = JSON.parse(document.getElementById("consent-data").textContent);
  const connect = document.getElementById("connect");
  const sign = document.getElementById("sign");
  const status = document.getElementById("consent-status");
  let account = null;
  const say = (text) => { status.textContent = text; };

  connect.addEventListener("click", async () => {
    if (!window.ethereum) {
      say("No browser wallet found. Install a wallet such as MetaMask, or open this link in your wallet's browser.");
      return;
    }
    try {
      const accounts = await window.ethereum.request({ method: "eth_requestAccounts" });
      const match = accounts.find((a) => a.toLowerCase() === data.signer.toLowerCase());
      if (!match) {
        say(`Connected ${accounts[0] || "no account"}, but this must be signed by ${data.signer}. Switch accounts in your wallet and connect again.`);
        return;
      }
      account = match;
      say(`Connected ${account}. Review the terms, then sign.`);
      sign.disabled = false;
      sign.focus();
    } catch (e) {
      say(`The wallet did not connect: ${e && e.message ? e.message : e}`);
    }
  });

  sign.addEventListener("click", async () => {
    sign.disabled = true;
    say("Waiting for your wallet's signature…");
    let signature;
    try {
      signature = await window.ethereum.request({
        method: "eth_signTypedData_v4",
        params: [account, JSON.stringify(data.typed_data)],
      });
    } catch (e) {
      say(`Not signed: ${e && e.message ? e.message : e}`);
      sign.disabled = false;
      return;
    }
    say("Signed. Sending it to Openrail and waiting for the chain…");
    const res = await fetch(`/authorize/${encodeURIComponent(data.id)}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ signature }),
    });
    const body = await res.json().catch(() => ({}));
    if (res.ok) {
      say(`Authorized. Status: ${body.status}.`);
      setTimeout(() => window.location.reload(), 800);
    } else {
      say(`Refused: ${body.detail || res.statusText}`);
      sign.disabled = false;
    }
  });
})();
