//! The service's ids ([`crate::ids`]) in SQLite columns: written as text,
//! and checked when read, so that a row holding a malformed id is an error
//! (a damaged database), not a value.

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};

use crate::ids::{BuildId, ContentId, JobId, OperationName, WorkflowId};

macro_rules! column {
    ($($name:ident),*) => {$(
        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(ToSqlOutput::from(self.as_str()))
            }
        }

        impl FromSql for $name {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                Self::parse(value.as_str()?).map_err(|e| FromSqlError::Other(Box::new(e)))
            }
        }
    )*};
}

column!(WorkflowId, BuildId, ContentId, JobId, OperationName);
