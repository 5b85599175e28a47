//! The browser client: the files of `web/`, embedded in the binary at build
//! time, so running the server is all a user needs.

use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use include_dir::{Dir, include_dir};

static WEB: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../web");

/// `GET /`: the client's page.
pub async fn index() -> Response {
    file("index.html")
}

/// `GET /{*path}`: any other embedded file, or 404.
pub async fn asset(Path(path): Path<String>) -> Response {
    file(&path)
}

fn file(path: &str) -> Response {
    let Some(f) = WEB.get_file(path) else {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    };
    let mime = mime_guess::from_path(path).first_or_octet_stream();
    let mut resp = f.contents().into_response();
    let headers = resp.headers_mut();
    if let Ok(v) = HeaderValue::from_str(mime.as_ref()) {
        headers.insert(header::CONTENT_TYPE, v);
    }
    // Files change with the binary: let browsers check each time.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    resp
}

/// Every embedded file's path (for tests).
pub fn files() -> Vec<&'static str> {
    fn walk(dir: &'static Dir<'static>, out: &mut Vec<&'static str>) {
        for f in dir.files() {
            if let Some(p) = f.path().to_str() {
                out.push(p);
            }
        }
        for d in dir.dirs() {
            walk(d, out);
        }
    }
    let mut out = Vec::new();
    walk(&WEB, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_is_embedded_and_served_with_types() {
        let files = files();
        assert!(files.contains(&"index.html"));
        assert!(files.iter().any(|f| f.ends_with(".js")));
        assert!(files.iter().any(|f| f.ends_with(".css")));
        let resp = file("index.html");
        assert_eq!(resp.status(), StatusCode::OK);
        assert_eq!(resp.headers()[header::CONTENT_TYPE], "text/html");
        let css = files.iter().find(|f| f.ends_with(".css")).unwrap();
        assert_eq!(file(css).headers()[header::CONTENT_TYPE], "text/css");
        assert_eq!(file("missing.txt").status(), StatusCode::NOT_FOUND);
        assert_eq!(file("../Cargo.toml").status(), StatusCode::NOT_FOUND);
    }
}
