//! Driver kernel module (open or proprietary), kernel and distribution, from /proc and /etc.

use super::fs::{HostFs, io_failure};
use crate::snapshot::{OsInfo, Probed, Reason, ReasonCode};

/// `open` or `proprietary` from the first line of /proc/driver/nvidia/version, e.g.
/// `NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ...`.
pub(crate) fn kernel_module_kind(version_file: &str) -> Probed<String> {
    let first = version_file.lines().next().unwrap_or("");
    if !first.contains("NVRM version") {
        return Probed::failed(format!(
            "/proc/driver/nvidia/version not understood: {:?}",
            crate::collect::run::short(first, 80)
        ));
    }
    if first.contains("Open Kernel Module") {
        Probed::Value("open".into())
    } else {
        Probed::Value("proprietary".into())
    }
}

/// The driver's kernel module kind.
pub fn driver_module(fs: &dyn HostFs) -> Probed<String> {
    let path = "/proc/driver/nvidia/version";
    match fs.read(path) {
        Ok(t) => kernel_module_kind(&t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Probed::skipped(Reason::new(
            ReasonCode::NoDriver,
            format!(
                "{path} not present: the NVIDIA kernel module is not loaded, or not visible here"
            ),
        )),
        Err(e) => Probed::failed(io_failure(path, &e)),
    }
}

/// `PRETTY_NAME` (else `NAME VERSION_ID`) from os-release text.
pub(crate) fn os_release_name(text: &str) -> Option<String> {
    let mut map = std::collections::BTreeMap::new();
    for line in text.lines() {
        if let Some((k, v)) = line.split_once('=') {
            let v = v.trim().trim_matches('"').trim_matches('\'');
            map.insert(k.trim(), v.to_string());
        }
    }
    if let Some(p) = map.get("PRETTY_NAME").filter(|p| !p.is_empty()) {
        return Some(p.clone());
    }
    let name = map.get("NAME")?;
    Some(match map.get("VERSION_ID") {
        Some(v) => format!("{name} {v}"),
        None => name.clone(),
    })
}

fn read_trimmed(fs: &dyn HostFs, path: &str) -> Probed<String> {
    match fs.read(path) {
        Ok(t) if !t.trim().is_empty() => Probed::Value(t.trim().to_string()),
        Ok(_) => Probed::failed(format!("{path} is empty")),
        Err(e) => Probed::failed(io_failure(path, &e)),
    }
}

/// Distribution, kernel and host name.
pub fn collect(fs: &dyn HostFs) -> Probed<OsInfo> {
    let name = ["/etc/os-release", "/usr/lib/os-release"]
        .iter()
        .find_map(|p| fs.read(p).ok().map(|t| (p, t)))
        .map(|(p, t)| match os_release_name(&t) {
            Some(n) => Probed::Value(n),
            None => Probed::failed(format!("{p}: no PRETTY_NAME or NAME")),
        })
        .unwrap_or_else(|| Probed::failed("/etc/os-release and /usr/lib/os-release not readable"));
    Probed::Value(OsInfo {
        name,
        kernel: read_trimmed(fs, "/proc/sys/kernel/osrelease"),
        hostname: read_trimmed(fs, "/proc/sys/kernel/hostname"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::fs::MapFs;

    #[test]
    fn module_kind() {
        let open = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U22-I3-AF03-09-1)  Thu Mar 12 2026\nGCC version: gcc 12";
        assert_eq!(kernel_module_kind(open), Probed::Value("open".into()));
        let prop = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.15  Release Build";
        assert_eq!(
            kernel_module_kind(prop),
            Probed::Value("proprietary".into())
        );
        assert!(matches!(kernel_module_kind("garbage"), Probed::Failed(_)));
    }

    #[test]
    fn os_release() {
        assert_eq!(
            os_release_name(
                "NAME=\"Ubuntu\"\nVERSION_ID=\"24.04\"\nPRETTY_NAME=\"Ubuntu 24.04.3 LTS\"\n"
            ),
            Some("Ubuntu 24.04.3 LTS".into())
        );
        assert_eq!(os_release_name("NAME=Arch\n"), Some("Arch".into()));
        assert_eq!(os_release_name(""), None);
    }

    #[test]
    fn unreadable_files_give_reasons_and_the_rest_stays() {
        let fs = MapFs::new()
            .file("/etc/os-release", "PRETTY_NAME=\"Debian 13\"")
            .file("/proc/sys/kernel/osrelease", "6.8.0\n")
            .deny("/proc/sys/kernel/hostname")
            .deny("/proc/driver");
        let os = collect(&fs);
        let os = os.value().expect("os");
        assert_eq!(os.name, Probed::Value("Debian 13".into()));
        assert_eq!(os.kernel, Probed::Value("6.8.0".into()));
        assert!(
            matches!(os.hostname, Probed::Failed(ref e) if e.to_string().contains("permission denied"))
        );
        assert!(
            matches!(driver_module(&fs), Probed::Failed(ref e) if e.to_string().contains("permission denied"))
        );
        let none = MapFs::new();
        assert!(matches!(driver_module(&none), Probed::Skipped(_)));
    }
}
