//! Reading a configured file with a bound on its size: a file named by a
//! setting (a web configuration, a certificate, a key) is read at most to
//! that bound, so `/dev/zero` or a runaway log given by mistake is an error
//! at once instead of memory without end.

use std::io::Read;
use std::path::Path;

/// The bytes of the file at `path`, if it holds at most `most` bytes.
///
/// # Errors
/// The file cannot be opened or read, or it holds more than `most` bytes
/// (an [`std::io::ErrorKind::FileTooLarge`] error saying the bound); no more
/// than `most + 1` bytes are read either way.
///
/// ```
/// let e = gym_metrics_kit::file::read_bounded("/dev/zero".as_ref(), 1024).unwrap_err();
/// assert_eq!(e.kind(), std::io::ErrorKind::FileTooLarge);
/// assert!(e.to_string().contains("more than 1024 bytes"), "{e}");
/// # let path = std::env::temp_dir().join(format!("kit-doc-bounded-{}", std::process::id()));
/// # std::fs::write(&path, b"tiny")?;
/// assert_eq!(gym_metrics_kit::file::read_bounded(&path, 4)?, b"tiny");
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn read_bounded(path: &Path, most: u64) -> std::io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(most.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > most {
        return Err(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!("it holds more than {most} bytes, the most read from such a file; name the right file"),
        ));
    }
    Ok(bytes)
}
