//! `tfhe-sbc-keys`: the trusted party's provisioning tool. See the library documentation and `--help`.

use clap::builder::PossibleValue;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use tfhe_sbc_adapter::interop::big_key::BooleanSet;
use tfhe_sbc_keys::error::Error;
use tfhe_sbc_keys::{KeyMode, KeySetParameters, commands};

/// The trusted party's provisioning tool: tfhe-rs keys, device credentials, the adapter's key store.
#[derive(Parser, Debug)]
#[command(name = "tfhe-sbc-keys", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Make a key set: tfhe-rs client key (0600) and server key, public key (0644), empty key store (0600).
    Init {
        /// The key set directory (created with mode 0700; must not hold a key set).
        #[arg(long)]
        dir: PathBuf,
        /// The tfhe-rs parameter set: a boolean one, or integer.
        #[arg(long, value_enum)]
        parameters: Parameters,
        /// The key set's key id (default: random): frames under the key set's key carry it.
        #[arg(long, value_parser = parse_u32)]
        key_id: Option<u32>,
        /// With --parameters integer: also tfhe-rs's CompactPublicKey (PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128,
        /// compact_public_key.tscp) and the casting key in the server key, for compact-list devices.
        #[arg(long)]
        compact_list: bool,
    },
    /// Provision one device (or --count devices): devices/<ID>.tsdc (0600) and its record in the key store.
    Issue {
        /// The key set directory written by init.
        #[arg(long)]
        dir: PathBuf,
        /// The device id (unique in the key set); with --count, the first of consecutive ids.
        #[arg(long)]
        device_id: u64,
        /// How many devices to provision, numbered from --device-id, in one pass (the server key is read
        /// once and the key store written once). Crash-consistent: a pass interrupted at any point is
        /// finished or rolled back by the next issue (or repair) from its journal, issue.journal. At most
        /// 10,000 per pass (every device's files are held in memory until the pass commits): a larger fleet
        /// takes several passes.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=10_000))]
        count: u64,
        /// The key mode. Every parameter set takes fleet, public-key and per-device;
        /// compact-list needs an integer key set made with --compact-list.
        #[arg(long, value_enum)]
        mode: Mode,
        /// The key id the device's frames carry (default: the key set's; per-device mode only may differ).
        #[arg(long, value_parser = parse_u32)]
        key_id: Option<u32>,
        /// UNSAFE FOR PRODUCTION: a firmware development credential (--mode per-device, tfhe-lib key set):
        /// the key, MAC key and seed are derived from the device id by a public XOF, exactly as
        /// the firmware's development credential makes them (key id 0), so ANYONE can decrypt and forge this
        /// device's frames. Writes devices/<ID>.UNSAFE-DEV.tsdc and devices/<ID>.UNSAFE-DEV.seed and the
        /// device's record (its key-switching key), so that this key set's check-frame accepts and decrypts a
        /// development firmware's frames. Never in a deployment: show marks such devices UNSAFE-DEV.
        #[arg(long)]
        unsafe_dev_credential: bool,
    },
    /// Finish or roll back an interrupted issue (issue does this itself first), remove temporary files, and
    /// move the files of devices the key store does not hold into DIR/quarantine/ (never deleted: a key store
    /// restored from an older backup does not list the devices issued since).
    Repair {
        /// The key set directory written by init.
        #[arg(long)]
        dir: PathBuf,
    },
    /// Check one frame against the key set, as the server's intake does, and decrypt what it carries (the
    /// trusted party's client key): for firmware bring-up. Exit 1 and the intake's reason if it is refused.
    CheckFrame {
        /// The key set directory written by init.
        #[arg(long)]
        dir: PathBuf,
        /// The frame's bytes, as the device sent them.
        #[arg(long, conflicts_with = "hex", required_unless_present = "hex")]
        file: Option<PathBuf>,
        /// The frame's bytes in hexadecimal (whitespace ignored).
        #[arg(long)]
        hex: Option<String>,
        /// Accept full-mask secret-key frames, as a server configured with allow_full_frames (off by default,
        /// as on the server).
        #[arg(long)]
        allow_full_frames: bool,
    },
    /// List the key set and its devices (no secret is printed).
    Show {
        /// The key set directory written by init.
        #[arg(long)]
        dir: PathBuf,
    },
}

/// A key set's parameters on the command line, each named by [`KeySetParameters::name`].
#[derive(Clone, Copy, Debug)]
struct Parameters(KeySetParameters);

impl ValueEnum for Parameters {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            Self(KeySetParameters::Boolean(BooleanSet::TfheLib)),
            Self(KeySetParameters::Boolean(BooleanSet::DefaultKsPbs)),
            Self(KeySetParameters::Boolean(BooleanSet::ErrorProb2m165KsPbs)),
            Self(KeySetParameters::Integer),
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self.0 {
            KeySetParameters::Boolean(BooleanSet::TfheLib) => {
                "TFHE_LIB_PARAMETERS: N = 1024, k = 1, about 120 bits; every key mode"
            }
            KeySetParameters::Boolean(BooleanSet::DefaultKsPbs) => {
                "DEFAULT_PARAMETERS_KS_PBS: N = 512, k = 3, 128 bits; every key mode (per-device: one GLWE key switch per frame)"
            }
            KeySetParameters::Boolean(BooleanSet::ErrorProb2m165KsPbs) => {
                "PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS: N = 1024, k = 2, 128 bits; every key mode (per-device: one GLWE key switch per frame)"
            }
            KeySetParameters::Integer => {
                "PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128 (tfhe-rs's high-level default): FheUint8 .. FheUint64 \
                 from N = 2048 u64 frames; every key mode"
            }
        };
        Some(PossibleValue::new(self.0.name()).help(help))
    }
}

/// Device modes on the command line: a key mode, each named by [`KeyMode::name`] (the device's credential
/// file, the key store and this tool share that one type), or `compact-list`.
#[derive(Clone, Copy, Debug)]
enum Mode {
    /// A key mode of our frames.
    Key(KeyMode),
    /// tfhe-rs's own compact lists (with public-key credentials).
    CompactList,
}

impl ValueEnum for Mode {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            Self::Key(KeyMode::PerDeviceSecretKey),
            Self::Key(KeyMode::FleetSecretKey),
            Self::Key(KeyMode::PublicKey),
            Self::CompactList,
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let (name, help) = match *self {
            Self::Key(mode @ KeyMode::PerDeviceSecretKey) => (
                mode.name(),
                "The device's own secret key; a stolen device reveals only its own traffic",
            ),
            Self::Key(mode @ KeyMode::FleetSecretKey) => (
                mode.name(),
                "The client key's GLWE key, shared by every fleet device; one stolen device reveals all of them",
            ),
            Self::Key(mode @ KeyMode::PublicKey) => (
                mode.name(),
                "The key set's public key only; a stolen device reveals no data",
            ),
            Self::CompactList => (
                "compact-list",
                "tfhe-rs's own CompactCiphertextList under the key set's compact public key (integer key sets made \
                 with --compact-list), plus public-key credentials; a stolen device reveals no data",
            ),
        };
        Some(PossibleValue::new(name).help(help))
    }
}

/// A u32 in decimal or `0x` hexadecimal.
fn parse_u32(s: &str) -> Result<u32, String> {
    let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => s.parse(),
    };
    parsed.map_err(|e| format!("{e} (a key id is a u32, decimal or 0x hexadecimal)"))
}

/// A frame from `--file` or `--hex`.
fn frame_bytes(file: Option<PathBuf>, hex: Option<String>) -> Result<Vec<u8>, Error> {
    match (file, hex) {
        (Some(path), _) => {
            // At most one byte past the longest frame a server accepts: a larger file is no frame.
            let limit = tfhe_sbc_adapter::stream::DEFAULT_MAX_FRAME_BYTES;
            let refuse = |problem: String| Error::BadArgument {
                message: format!(
                    "--file {}: {problem} (give a frame's bytes, e.g. a file of the client's outbox, or --hex)",
                    path.display()
                ),
            };
            let file = std::fs::File::open(&path).map_err(|e| refuse(e.to_string()))?;
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut std::io::Read::take(file, limit as u64 + 1), &mut bytes)
                .map_err(|e| refuse(e.to_string()))?;
            if bytes.len() > limit {
                return Err(refuse(format!("longer than the longest frame ({limit} bytes)")));
            }
            Ok(bytes)
        }
        (None, Some(hex)) => {
            let digits: Vec<u8> = hex.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
            let bad = || Error::BadArgument {
                message: "--hex takes the frame as pairs of hexadecimal digits".to_owned(),
            };
            if !digits.len().is_multiple_of(2) {
                return Err(bad());
            }
            digits
                .chunks(2)
                .map(|pair| {
                    std::str::from_utf8(pair)
                        .ok()
                        .and_then(|p| u8::from_str_radix(p, 16).ok())
                        .ok_or_else(bad)
                })
                .collect()
        }
        (None, None) => Err(Error::BadArgument {
            message: "check-frame takes --file FRAME or --hex HEX".to_owned(),
        }),
    }
}

/// The command line, or exit status 2 with clap's error in one line saying what to fix (its text before the
/// usage: the message, the missing arguments, a tip); `--help` and `--version` print as usual.
fn parse_command_line<P: Parser>() -> P {
    match P::try_parse() {
        Ok(parsed) => parsed,
        Err(e) if e.use_stderr() => {
            let text = e.to_string();
            let message: Vec<&str> = text
                .lines()
                .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            eprintln!("{} (see --help)", message.join(" "));
            std::process::exit(2)
        }
        Err(e) => e.exit(),
    }
}

fn main() -> ExitCode {
    let result = match parse_command_line::<Cli>().command {
        Command::Init {
            dir,
            parameters: Parameters(parameters),
            key_id,
            compact_list,
        } => match (parameters, compact_list) {
            (KeySetParameters::Boolean(_), true) => Err(Error::BadArgument {
                message: format!(
                    "--compact-list takes --parameters integer (tfhe-rs's compact public keys cast into its integer \
                     set), not {}",
                    parameters.name()
                ),
            }),
            (KeySetParameters::Boolean(set), false) => commands::init(&dir, set, key_id),
            (KeySetParameters::Integer, false) => commands::init_integer(&dir, key_id),
            (KeySetParameters::Integer, true) => commands::init_compact_list(&dir, key_id),
        },
        Command::Issue {
            dir,
            device_id,
            count,
            mode,
            key_id,
            unsafe_dev_credential,
        } => match (mode, unsafe_dev_credential) {
            (Mode::Key(KeyMode::PerDeviceSecretKey), true) => {
                commands::issue_dev_devices(&dir, device_id, count, key_id)
            }
            (Mode::Key(KeyMode::FleetSecretKey | KeyMode::PublicKey) | Mode::CompactList, true) => {
                Err(Error::BadArgument {
                    message: "--unsafe-dev-credential takes --mode per-device (the firmware development credential)"
                        .to_owned(),
                })
            }
            (Mode::Key(mode), false) => commands::issue_devices(&dir, device_id, count, mode, key_id),
            (Mode::CompactList, false) => commands::issue_compact_list_devices(&dir, device_id, count, key_id),
        },
        Command::Repair { dir } => commands::repair(&dir),
        Command::CheckFrame {
            dir,
            file,
            hex,
            allow_full_frames,
        } => frame_bytes(file, hex).and_then(|frame| commands::check_frame(&dir, &frame, allow_full_frames)),
        Command::Show { dir } => commands::show(&dir),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e @ Error::FrameRefused { .. }) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
        Err(
            e @ (Error::KeySet(_)
            | Error::AlreadyInitialized { .. }
            | Error::Locked { .. }
            | Error::Mismatch { .. }
            | Error::DuplicateDevice { .. }
            | Error::OrphanCredentials { .. }
            | Error::InconsistentJournal { .. }
            | Error::Interrupted { .. }
            | Error::BadArgument { .. }
            | Error::Entropy
            | Error::Provisioning { .. }),
        ) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
