//! `op_file`: `String -> Bytes`, the contents of a file named by a path or a
//! `file://` URL. Needs std and a file system, so its manifest's targets are
//! `["native"]`; every failure names the path it was about.
#![forbid(unsafe_code)]

use braid_support::{Bytes, Config, Error};
use std::path::PathBuf;

/// Reads the file `input` names.
#[braid_macros::operation(groups = ["SYS"])]
pub async fn execute(input: &str, config: &Config) -> Result<Bytes, Error> {
    let _ = config;
    let path = to_path(input)?;
    std::fs::read(&path).map_err(|e| Error::Io { path: input.into(), reason: e.to_string() })
}

/// A path as given, or the path of a `file://` URL (percent-decoded).
fn to_path(input: &str) -> Result<PathBuf, Error> {
    if input.is_empty() {
        return Err(Error::Io { path: String::new(), reason: "the path is empty".into() });
    }
    if !input.starts_with("file:") {
        if input.contains("://") {
            return Err(Error::Io { path: input.into(), reason: "only paths and file:// URLs are supported".into() });
        }
        return Ok(PathBuf::from(input));
    }
    let url = url::Url::parse(input)
        .map_err(|e| Error::Io { path: input.into(), reason: format!("not a valid file URL: {e}") })?;
    url.to_file_path().map_err(|()| Error::Io {
        path: input.into(),
        reason: "a file URL needs an absolute local path such as file:///tmp/x".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(input: &str) -> Result<Bytes, Error> {
        execute_sync(input, &Config::new())
    }

    #[test]
    fn reads_paths_and_file_urls() {
        let dir = std::env::temp_dir().join(format!("op_file_test_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a b.txt");
        std::fs::write(&path, b"content").unwrap();
        assert_eq!(read(path.to_str().unwrap()).unwrap(), b"content");
        let url = format!("file://{}", path.to_str().unwrap().replace(' ', "%20"));
        assert_eq!(read(&url).unwrap(), b"content");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn errors_name_the_path() {
        let err = read("/nonexistent/braid/x.bin").unwrap_err().to_string();
        assert!(err.starts_with("cannot read `/nonexistent/braid/x.bin`: "), "{err}");
        let err = read("https://example.com/x").unwrap_err().to_string();
        assert!(err.contains("only paths and file:// URLs"), "{err}");
        let err = read("file://relative").unwrap_err().to_string();
        assert!(err.contains("cannot read `file://relative`"), "{err}");
        assert!(read("").unwrap_err().to_string().contains("empty"));
    }

    #[test]
    fn is_native_only() {
        assert!(OPERATION.manifest_json.contains(r#""targets":["native"]"#), "{}", OPERATION.manifest_json);
        assert!(OPERATION.manifest_json.contains(r#""features":["std"]"#));
    }
}
