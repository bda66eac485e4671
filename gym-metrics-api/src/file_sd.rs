//! The fleet's targets as a `file_sd_configs` file, replaced atomically: a
//! reader (Prometheus, vmagent) sees the old list or the new one, never half
//! of one.

use std::collections::hash_map::RandomState;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::FleetTarget;

/// Writes `targets` to `path` as service-discovery JSON: into a new
/// temporary file beside it, flushed to disk, then renamed over `path`.
///
/// The temporary's name (`.<name>.<pid>.<random>.tmp`, which no `*.json`
/// pattern matches) cannot be guessed, and it is created exclusively
/// (`O_CREAT|O_EXCL`, which never follows a symlink): a link planted in the
/// folder cannot make this process write through it.
pub(crate) fn write_file_sd(targets: &[FleetTarget], path: &Path) -> Result<(), FileSdError> {
    let error = |source| FileSdError {
        path: path.to_path_buf(),
        source,
    };
    let name = path
        .file_name()
        .ok_or_else(|| error(std::io::Error::other("the path names no file")))?;
    let (temp, mut file) = create_temporary(path, name).map_err(error)?;
    let written = (|| {
        file.write_all(FleetTarget::sd_json(targets).as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written.map_err(error)
}

/// A new file beside `path` under a name no other process can predict; a
/// name already taken (by chance, or by someone's planted entry) is skipped.
fn create_temporary(path: &Path, name: &OsStr) -> std::io::Result<(PathBuf, File)> {
    let mut last = None;
    for attempt in 0..8u64 {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(attempt);
        let mut temp_name = OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(
            ".{}.{:016x}.tmp",
            std::process::id(),
            hasher.finish()
        ));
        let temp = path.with_file_name(temp_name);
        match File::options().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no temporary name was free")))
}

/// The `file_sd_configs` file could not be replaced; the previous one (if
/// any) is left as it was.
///
/// ```
/// use gym_metrics_api::FileSdError;
/// let e = FileSdError { path: "/nope/fleet.json".into(), source: std::io::ErrorKind::NotFound.into() };
/// assert!(e.to_string().contains("/nope/fleet.json"));
/// ```
#[derive(Debug, thiserror::Error)]
#[error("could not write the fleet's file_sd targets to {}: {source}; make sure its directory exists and this process may write there", path.display())]
pub struct FileSdError {
    /// The file that was to be replaced.
    pub path: PathBuf,
    /// Why it could not be.
    #[source]
    pub source: std::io::Error,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Role;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gym-file-sd-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn target(port: u16) -> FleetTarget {
        FleetTarget::of_process(
            format!("127.0.0.1:{port}"),
            &Role::server(format!("s-{port}"), "resources"),
            None,
        )
        .unwrap()
    }

    #[test]
    fn replaces_the_whole_file_and_leaves_no_temporary() {
        let dir = temp_dir("replace");
        let path = dir.join("fleet.json");
        write_file_sd(&[target(1), target(2)], &path).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            FleetTarget::sd_json(&[target(1), target(2)])
        );
        // A shorter list must not leave the longer one's tail behind.
        write_file_sd(&[target(3)], &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, FleetTarget::sd_json(&[target(3)]));
        write_file_sd(&[], &path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[]");
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["fleet.json"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_reader_holding_the_old_file_keeps_the_old_list() {
        // Rename swaps the directory entry: an open reader still reads the
        // complete old file, never a mix.
        let dir = temp_dir("reader");
        let path = dir.join("fleet.json");
        write_file_sd(&[target(1), target(2)], &path).unwrap();
        let mut old = File::open(&path).unwrap();
        write_file_sd(&[target(3)], &path).unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut old, &mut text).unwrap();
        assert_eq!(text, FleetTarget::sd_json(&[target(1), target(2)]));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_symlink_is_never_written_through() {
        // The old temporary name was `.<name>.<pid>.tmp`, opened following
        // links: a link planted there made the orchestrator overwrite its
        // target. Plant that link, and links at a few more guesses.
        let dir = temp_dir("symlink");
        let outside = temp_dir("symlink-victim");
        let victim = outside.join("victim.txt");
        std::fs::write(&victim, "keep me").unwrap();
        let path = dir.join("fleet.json");
        let pid = std::process::id();
        for guess in [
            format!(".fleet.json.{pid}.tmp"),
            format!(".fleet.json.{pid}.0.tmp"),
        ] {
            std::os::unix::fs::symlink(&victim, dir.join(guess)).unwrap();
        }
        write_file_sd(&[target(1)], &path).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            FleetTarget::sd_json(&[target(1)])
        );
        assert!(!std::fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_symlink());
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_dir_all(&outside).unwrap();
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_the_path_and_the_old_file_stays() {
        let dir = temp_dir("missing");
        let path = dir.join("no-such-dir").join("fleet.json");
        let e = write_file_sd(&[target(1)], &path).unwrap_err();
        assert_eq!(e.path, path);
        assert!(e.to_string().contains("no-such-dir"), "{e}");

        // The target is a directory: rename fails, the temporary is removed.
        let blocked = dir.join("blocked.json");
        std::fs::create_dir(&blocked).unwrap();
        std::fs::write(blocked.join("keep"), "x").unwrap();
        assert!(write_file_sd(&[target(1)], &blocked).is_err());
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["blocked.json"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
