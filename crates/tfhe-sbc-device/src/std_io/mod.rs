//! What a device program on Linux (a Raspberry Pi) needs around the encryption (feature `std`): the
//! credential file from a path, an encryptor for whatever mode and parameter set that file names, a frame
//! counter persisted so that a restart never reuses a sequence number, and the stream framing of frames and
//! acknowledgements ([`crate::frame::ack`]). The encryptor is any of the crate's, through
//! [`crate::encrypt::FrameEncryptor`].
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::net::TcpStream;
//! use tfhe_sbc_device::std_io::{CredentialsFile, MessageEncryptor, PersistentCounter, read_ack, write_frame};
//!
//! let file = CredentialsFile::read("devices/7.tsdc".as_ref())?;
//! let credentials = file.decode()?;
//! // Built in place on the heap, its CSPRNG seeded in place from the OS (feature `getrandom`).
//! let mut encryptor = MessageEncryptor::from_os_entropy(&credentials)?;
//! let mut counter = PersistentCounter::open("devices/7.counter".as_ref(), PersistentCounter::DEFAULT_BLOCK)?;
//!
//! let readings = [21u8, 22, 23];
//! let outgoing = counter.begin_message(readings.len(), encryptor.chunk_bytes())?;
//! let frames = encryptor.encrypt_message(&credentials.credentials, &outgoing, &readings)?;
//! let mut socket = TcpStream::connect("127.0.0.1:7700")?;
//! for frame in &frames {
//!     write_frame(&mut socket, &frame.bytes)?;
//! }
//! for frame in &frames {
//!     let record = read_ack(&mut socket)?.ok_or("server closed the connection")?;
//!     // Act only on a record whose tag verifies for this very frame; anything else is advice.
//!     let tag = tfhe_sbc_device::frame::ack::frame_tag(&frame.bytes).ok_or("no frame")?;
//!     match record.open(credentials.credentials.mac_key(), tag) {
//!         Ok(ack) => println!("{:?} for sequence {}", ack.status, ack.sequence),
//!         Err(e) => println!("ignored: {e}"),
//!     }
//! }
//! # Ok(())
//! # }
//! ```

mod counter;
mod files;
mod message_encryptor;
mod stream;

pub use crate::encrypt::stack_scrub::{self as scrub, scrub_stack, scrub_stack_deep};
pub use counter::PersistentCounter;
pub use files::{CredentialsFile, FileError, write_atomic};
pub use message_encryptor::{MessageEncryptor, SealedFrame};
pub use stream::{read_ack, write_ack, write_frame};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::ack::{ACK_BYTES, Ack, AckStatus};
    use std::fs;
    use std::io;
    use std::path::PathBuf;
    use std::vec::Vec;

    /// A fresh, empty directory under the system's temporary directory.
    fn scratch_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(std::format!("tfhe-sbc-std-io-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn counter_reserves_blocks_and_never_goes_back() {
        let dir = scratch_dir("counter");
        let path = dir.join("7.counter");
        let mut counter = PersistentCounter::open(&path, 4).unwrap();
        assert_eq!(counter.next_sequence(), 0);
        assert_eq!(fs::read_to_string(&path).unwrap(), "4\n");
        let first = counter.begin_message(300, 128).unwrap(); // 3 chunks: 0, 1, 2
        assert_eq!((first.first_sequence(), first.chunk_count()), (0, 3));
        let second = counter.begin_message(200, 128).unwrap(); // 2 chunks: past the block, 3 and 4
        assert_eq!(second.first_sequence(), 3);
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "8\n",
            "the next block (the old end plus 4) persisted before its numbers were handed out"
        );
        drop(counter);
        // A restart starts at the persisted end: every number handed out before stays below it.
        let counter = PersistentCounter::open(&path, 4).unwrap();
        assert_eq!(counter.next_sequence(), 8);
        // One process per counter file: a second opener is refused while the first holds it.
        let second = PersistentCounter::open(&path, 4).unwrap_err();
        assert!(matches!(second, FileError::CounterInUse { .. }), "{second}");
        assert!(std::format!("{second}").contains("one client per credential file"));
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "12\n",
            "the refused opener reserved nothing"
        );
        drop(counter);
        assert!(matches!(
            PersistentCounter::open(&path, 0),
            Err(FileError::CounterExhausted { .. })
        ));
        fs::write(&path, "nine\n").unwrap();
        let error = PersistentCounter::open(&path, 4).unwrap_err();
        assert!(matches!(error, FileError::BadCounter { .. }));
        assert!(std::format!("{error}").contains("7.counter"));
        fs::write(&path, std::format!("{}\n", u64::MAX - 2)).unwrap();
        assert!(matches!(
            PersistentCounter::open(&path, 4),
            Err(FileError::CounterExhausted { .. })
        ));
        fs::remove_dir_all(&dir).unwrap();
    }

    /// The one atomic writer: exact mode, no temporary file left, and concurrent writers of one path (two
    /// clients started on one credential file) never trip over a shared temporary name.
    #[test]
    fn atomic_writes_are_exact_and_never_share_a_temporary_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch_dir("atomic");
        let path = dir.join("7.counter");
        write_atomic(&path, b"1\n", 0o600).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        let writers: Vec<_> = (0..8u64)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || {
                    for j in 0..20u64 {
                        write_atomic(&path, std::format!("{}\n", i * 100 + j).as_bytes(), 0o600).unwrap();
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        let value: u64 = fs::read_to_string(&path).unwrap().trim().parse().unwrap();
        assert!(
            value % 100 == 19,
            "the file holds one writer's last value whole: {value}"
        );
        let names: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, [std::ffi::OsString::from("7.counter")], "no temporary file left");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn credential_files_are_checked() {
        let dir = scratch_dir("credentials");
        let missing = CredentialsFile::read(&dir.join("absent.tsdc")).unwrap_err();
        assert!(std::format!("{missing}").contains("no such file"), "{missing}");
        fs::write(dir.join("bad.tsdc"), b"TSDC and then nothing useful").unwrap();
        let bad = CredentialsFile::read(&dir.join("bad.tsdc")).unwrap_err();
        assert!(matches!(bad, FileError::BadCredentials { .. }));
        assert!(std::format!("{bad}").contains("tfhe-sbc-keys issue"), "{bad}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn frames_and_acks_over_a_stream() {
        let mut wire = Vec::new();
        write_frame(&mut wire, b"frame").unwrap();
        assert_eq!(wire, [5, 0, 0, 0, b'f', b'r', b'a', b'm', b'e']);
        let mut acks = Vec::new();
        let ack = Ack::new(AckStatus::Accepted, 7, 12);
        let key = crate::frame::mac::MacKey::from_bytes([1; 32]);
        write_ack(&mut acks, &ack.seal(&key, &[2; 16])).unwrap();
        write_ack(&mut acks, &ack.unauthenticated()).unwrap();
        let mut reader = &acks[..];
        assert_eq!(read_ack(&mut reader).unwrap().unwrap().open(&key, &[2; 16]), Ok(ack));
        let unauthenticated = read_ack(&mut reader).unwrap().unwrap();
        assert_eq!(unauthenticated.claimed, ack);
        assert!(unauthenticated.open(&key, &[2; 16]).is_err());
        assert_eq!(read_ack(&mut reader).unwrap(), None);
        let mut truncated = &acks[..10];
        assert_eq!(
            read_ack(&mut truncated).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
        let garbage = [0u8; ACK_BYTES];
        assert_eq!(
            read_ack(&mut &garbage[..]).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
    }
}
