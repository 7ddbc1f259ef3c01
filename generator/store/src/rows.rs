//! Reading columns back: text parsed into the service's types (ids, states,
//! JSON), where a value that does not parse is a damaged row, an error,
//! never a default.

use std::str::FromStr;

use sqlx::any::AnyRow;
use sqlx::{Column as _, Row as _};

use super::StoreError;

/// The name of column `i`, for messages.
fn name(row: &AnyRow, i: usize) -> String {
    row.columns().get(i).map_or_else(|| i.to_string(), |c| c.name().to_string())
}

/// Column `i`: text.
pub(super) fn text(row: &AnyRow, i: usize) -> Result<String, StoreError> {
    Ok(row.try_get(i)?)
}

/// Column `i`: text or NULL.
pub(super) fn optional_text(row: &AnyRow, i: usize) -> Result<Option<String>, StoreError> {
    Ok(row.try_get(i)?)
}

/// Column `i`: an integer.
pub(super) fn int(row: &AnyRow, i: usize) -> Result<i64, StoreError> {
    Ok(row.try_get(i)?)
}

/// Column `i`, parsed.
pub(super) fn parsed<T: FromStr>(row: &AnyRow, i: usize) -> Result<T, StoreError>
where
    T::Err: std::fmt::Display,
{
    let text = text(row, i)?;
    text.parse().map_err(|e| StoreError::Damaged(format!("column {} holds {text:?}: {e}", name(row, i))))
}

/// Column `i`, parsed if not NULL.
pub(super) fn optional_parsed<T: FromStr>(row: &AnyRow, i: usize) -> Result<Option<T>, StoreError>
where
    T::Err: std::fmt::Display,
{
    match optional_text(row, i)? {
        None => Ok(None),
        Some(text) => text
            .parse()
            .map(Some)
            .map_err(|e| StoreError::Damaged(format!("column {} holds {text:?}: {e}", name(row, i)))),
    }
}

/// Column `i`, JSON text parsed into `T`.
pub(super) fn json<T: serde::de::DeserializeOwned>(row: &AnyRow, i: usize) -> Result<T, StoreError> {
    serde_json::from_str(&text(row, i)?).map_err(|e| StoreError::Damaged(format!("column {}: {e}", name(row, i))))
}

/// Like [`json`], for a column that may be NULL.
pub(super) fn optional_json<T: serde::de::DeserializeOwned>(row: &AnyRow, i: usize) -> Result<Option<T>, StoreError> {
    optional_text(row, i)?
        .map(|t| serde_json::from_str(&t).map_err(|e| StoreError::Damaged(format!("column {}: {e}", name(row, i)))))
        .transpose()
}
