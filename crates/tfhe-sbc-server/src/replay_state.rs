//! The single-process server's replay state: each device's replay window, on disk before acknowledgements
//! leave (the JetStream roles keep the same windows in the devices KV bucket), so that a restarted server
//! accepts no frame twice: it resumes above the highest number accepted.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use tfhe_sbc_adapter::key_set::files::write_atomic_io;
use tfhe_sbc_adapter::key_store::KeyStore;
use tfhe_sbc_adapter::replay::ReplayWindow;

/// The replay state file: after the header line [`HEADER`], one line `<device id> <window>` per device that
/// has sent a frame, `<window>` being the 66 lowercase hexadecimal digits of [`ReplayWindow::to_bytes`]
/// (floor, highest, the bitmap of the 128 numbers below it). A file without the header is the older form,
/// `<device id> <lowest sequence number still acceptable>` (no window: numbers below the floor are refused
/// as too old rather than answered "duplicate").
pub struct ReplayState {
    path: PathBuf,
    windows: BTreeMap<u64, ReplayWindow>,
}

/// The first line of the replay state file.
pub const HEADER: &str = "# tfhe-sbc-server replay state v2: <device id> <replay window, 33 bytes in hex>";

/// The file's permission bits (replay windows are no secret).
const MODE: u32 = 0o644;

impl ReplayState {
    /// Reads `path` (absent: no device has sent a frame yet).
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let older_form = !text.starts_with(HEADER);
        let mut windows = BTreeMap::new();
        let lines = text.lines().enumerate();
        for (i, line) in lines.filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#')) {
            let mut fields = line.split_whitespace();
            let device = fields.next().and_then(|d| d.parse::<u64>().ok());
            let window = match (fields.next(), fields.next()) {
                (Some(floor), None) if older_form => floor.parse().ok().map(ReplayWindow::new),
                (Some(hex), None) => decode_window(hex),
                _ => None,
            };
            let (Some(device), Some(window)) = (device, window) else {
                return Err(format!(
                    "{} line {}: expected `<device id> <replay window>`: restore the file (deleting it lets frames \
                     accepted before the restart be accepted again)",
                    path.display(),
                    i + 1
                ));
            };
            windows.insert(device, window);
        }
        Ok(Self {
            path: path.to_owned(),
            windows,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The windows the devices of `store` that have sent a frame resume with ([`ReplayWindow::resumed`]:
    /// numbers above the highest accepted only).
    pub fn windows_of(&self, store: &KeyStore) -> HashMap<u64, ReplayWindow> {
        store
            .iter()
            .filter_map(|r| Some((r.device_id(), self.windows.get(&r.device_id())?.resumed())))
            .collect()
    }

    /// Records `device`'s window as it is now; whether it changed.
    pub fn update(&mut self, device: u64, window: &ReplayWindow) -> bool {
        if self.windows.get(&device) == Some(window) {
            return false;
        }
        self.windows.insert(device, window.clone());
        true
    }

    /// Writes the file atomically and durably, through the key set's one atomic writer
    /// ([`write_atomic_io`]: a temporary file in the same directory, fsync, rename, fsync of the directory),
    /// so that a crash leaves the old state or the new one and a power cut after the acknowledgement cannot
    /// lose the rename.
    pub fn save(&self) -> std::io::Result<()> {
        let mut text = format!("{HEADER}\n");
        for (device, window) in &self.windows {
            let hex: String = window.to_bytes().iter().map(|b| format!("{b:02x}")).collect();
            text.push_str(&format!("{device} {hex}\n"));
        }
        write_atomic_io(&self.path, text.as_bytes(), MODE)
    }
}

/// The window of `hex` (66 hexadecimal digits that [`ReplayWindow::from_bytes`] accepts).
fn decode_window(hex: &str) -> Option<ReplayWindow> {
    if hex.len() != 2 * ReplayWindow::BYTES || !hex.is_ascii() {
        return None;
    }
    let mut bytes = [0u8; ReplayWindow::BYTES];
    for (byte, pair) in bytes.iter_mut().zip(hex.as_bytes().chunks(2)) {
        *byte = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    ReplayWindow::from_bytes(&bytes)
}

#[cfg(test)]
mod tests {
    use super::{MODE, ReplayState};
    use std::os::unix::fs::PermissionsExt;
    use tfhe_sbc_adapter::IntakeError;
    use tfhe_sbc_adapter::replay::{FrameTag, ReplayWindow};

    const T: FrameTag = FrameTag([3; FrameTag::BYTES]);

    /// The windows survive a save and a reload (`u64::MAX` included), a second save replaces the first, no
    /// temporary file is left beside the file, and the older form still reads.
    #[test]
    fn replay_state_survives_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("replay_state.txt");
        let mut state = ReplayState::load(&path).expect("an absent file is no state");
        assert!(state.windows.is_empty());
        let mut window = ReplayWindow::new(0);
        for sequence in [41, 39, 7] {
            window.accept(sequence, T);
        }
        let mut last = ReplayWindow::new(0);
        last.accept(u64::MAX, T);
        assert!(state.update(7, &window) && state.update(11, &last));
        assert!(!state.update(7, &window), "unchanged");
        state.save().expect("saved");
        let reloaded = ReplayState::load(&path).expect("reloaded");
        // The file keeps the numbers, not the frames' tags (a resumed window holds no number anyway).
        assert_eq!(
            reloaded.windows.get(&7).map(ReplayWindow::to_bytes),
            Some(window.to_bytes())
        );
        let resumed = &reloaded.windows[&7];
        assert!(matches!(
            resumed.check(7, 39, T),
            Err(IntakeError::Replayed { sequence: 39, .. })
        ));
        assert_eq!(resumed.check(7, 40, T), Ok(()));
        assert!(matches!(
            reloaded.windows[&11].check(11, u64::MAX, T),
            Err(IntakeError::Replayed { .. })
        ));

        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("listed")
            .map(|e| e.expect("an entry").file_name())
            .collect();
        assert_eq!(names, ["replay_state.txt"], "only the state file is left");
        let mode = std::fs::metadata(&path).expect("metadata").permissions().mode() & 0o777;
        assert_eq!(mode, MODE);

        // The older form: `<device> <floor>`.
        std::fs::write(&path, "7 42\n").expect("written");
        let older = ReplayState::load(&path).expect("read");
        assert_eq!(older.windows.get(&7), Some(&ReplayWindow::new(42)));
        // A damaged line is refused with the line number.
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.insert_str(0, &format!("{}\n7 zz\n", super::HEADER));
        std::fs::write(&path, text).expect("written");
        let refused = ReplayState::load(&path).err().expect("refused");
        assert!(refused.contains("line 2"), "{refused}");
    }
}
