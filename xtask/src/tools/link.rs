//! The entries of `target/tools/bin/`: relative symlinks, or a wrapper script.

use std::path::{Path, PathBuf};

use gym_testkit::is_executable;

/// `bin/<name>` -> `relative_target` (relative to `bin/`, so the tree can move).
pub fn symlink(tools_dir: &Path, name: &str, relative_target: &Path) -> Result<PathBuf, String> {
    let bin = tools_dir.join("bin");
    if !is_executable(&bin.join(relative_target)) {
        return Err(format!(
            "{name}: link: {} is not an executable",
            bin.join(relative_target).display()
        ));
    }
    let link = bin.join(name);
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(relative_target, &link)
        .map_err(|e| format!("{name}: link: cannot create {}: {e}", link.display()))?;
    Ok(link)
}

/// `bin/<name>`: a script running `root/<binary>` with `library_dir` (relative to
/// the tools folder) on `LD_LIBRARY_PATH`.
pub fn wrapper(
    tools_dir: &Path,
    name: &str,
    binary: &str,
    library_dir: &Path,
) -> Result<PathBuf, String> {
    let script = format!(
        "#!/bin/sh\n# Written by `cargo xtask tools`: {name} with its unpacked libraries.\n\
         here=$(dirname \"$(readlink -f \"$0\")\")\n\
         LD_LIBRARY_PATH=\"$here/../{lib}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}\" exec \"$here/../root/{binary}\" \"$@\"\n",
        lib = library_dir.display()
    );
    script_file(tools_dir, name, &script)
}

/// `bin/<name>`: the shell script `text`, executable.
pub fn script_file(tools_dir: &Path, name: &str, text: &str) -> Result<PathBuf, String> {
    let path = tools_dir.join("bin").join(name);
    let _ = std::fs::remove_file(&path);
    std::fs::write(&path, text)
        .map_err(|e| format!("{name}: link: cannot write {}: {e}", path.display()))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("{name}: link: cannot chmod {}: {e}", path.display()))?;
    Ok(path)
}
