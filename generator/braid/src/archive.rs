//! Crate archives: the deterministic tar whose content id is an
//! operation's `source`.

use braid_schema::content_id;

/// A deterministic tar of `files` (path, bytes): sorted by path, regular
/// files only, mode 0644, mtime 0, uid and gid 0, no user names. The same
/// files give the same bytes, whatever their order.
pub fn pack(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut sorted: Vec<&(String, Vec<u8>)> = files.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut builder = tar::Builder::new(Vec::new());
    for (path, bytes) in sorted {
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        builder.append_data(&mut header, path, bytes.as_slice()).expect("writing a tar to memory cannot fail");
    }
    builder.into_inner().expect("writing a tar to memory cannot fail")
}

/// The content id of [`pack`]'s archive of `files`: an operation's `source`.
pub fn source_id(files: &[(String, Vec<u8>)]) -> String {
    content_id(&pack(files))
}
