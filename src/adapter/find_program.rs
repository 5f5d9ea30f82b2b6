//! Whether a program a hook command names can be run where the harness runs
//! its hooks: the one file-system look-up the kit's shell makes for a
//! provider's setup (a provider reads no file itself).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Where `program` is: itself if it names a path, else the first match on
/// `path` (a `PATH` value); `None` if nothing runnable is there.
pub fn find_program(program: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let runnable = |path: &Path| {
        path.metadata()
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let path = PathBuf::from(program);
        return runnable(&path).then_some(path);
    }
    std::env::split_paths(path?)
        .map(|dir| dir.join(program))
        .find(|candidate| runnable(candidate))
}

/// [`find_program`] on this process's `PATH`, which the harness's hooks
/// inherit too (the PTY host runs it from the same `ding up`).
pub fn find_on_path(program: &str) -> Option<PathBuf> {
    find_program(program, std::env::var_os("PATH").as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_must_be_a_runnable_file_and_a_name_is_looked_up() {
        let dir = tempfile::tempdir().expect("tempdir");
        let tool = dir.path().join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").expect("write");
        assert_eq!(
            find_program(tool.to_str().unwrap(), None),
            None,
            "not runnable"
        );
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        assert_eq!(
            find_program(tool.to_str().unwrap(), None),
            Some(tool.clone())
        );
        let path = std::ffi::OsString::from(format!("/nonexistent:{}", dir.path().display()));
        assert_eq!(find_program("tool", Some(&path)), Some(tool));
        assert_eq!(find_program("tool", None), None);
        assert_eq!(find_program("other", Some(&path)), None);
    }
}
