//! `/docs`: the API reference, rendered in the browser by Redoc from `/v1/openapi.json`.
//! Redoc's standalone bundle (npm `redoc`, pinned in `scripts/vendor-redoc.sh`) is
//! committed under `api/assets/redoc` and embedded in the binary: no CDN, no node at
//! build time. No authentication, like the document.

use axum::http::{HeaderValue, header};
use axum::response::{Html, IntoResponse, Response};

/// The bundle, embedded at build time.
const REDOC_JS: &[u8] = include_bytes!("../assets/redoc/redoc.standalone.js");

/// `GET /docs`: the reference page.
pub async fn page() -> Html<&'static str> {
    Html(
        r#"<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Openrail API reference</title>
  <style>body { margin: 0; padding: 0; }</style>
</head>
<body>
  <div id="redoc"></div>
  <script src="/docs/redoc.standalone.js"></script>
  <script>
    Redoc.init("/v1/openapi.json", { hideDownloadButton: false, expandResponses: "200,201" },
               document.getElementById("redoc"));
  </script>
</body>
</html>
"#,
    )
}

/// `GET /docs/redoc.standalone.js`: the vendored Redoc bundle.
pub async fn redoc() -> Response {
    let mut res = REDOC_JS.into_response();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/javascript; charset=utf-8"),
    );
    res.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=86400"),
    );
    res
}
