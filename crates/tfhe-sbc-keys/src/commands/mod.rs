//! The commands: `init` (boolean key sets) or `init_integer` / `init_compact_list` (the integer key set),
//! `issue` (`issue_compact_list_devices` for compact-list devices, `issue_dev_devices` for development ones),
//! `repair`, `show`, `check_frame`.
//! Each prints what it did to stdout and returns a typed [`Error`](crate::error::Error) on failure.
//!
//! This file only declares the commands' modules and re-exports the commands. What several of them share is
//! in a module of its own (`device_parameters.rs`, `entropy.rs`, `report.rs`, ...) or in the crate's
//! [`error`](crate::error) and [`files`](crate::files).

mod check_frame;
mod compact_list;
mod credentials;
mod dev_credential;
mod device_kinds;
mod device_parameters;
mod entropy;
mod init;
mod issue;
mod journal;
mod key_files;
mod repair;
mod report;
mod show;

pub use check_frame::check_frame;
pub use init::{init, init_compact_list, init_integer};
pub use issue::{issue, issue_compact_list_devices, issue_dev_devices, issue_devices};
pub use repair::repair;
pub use show::show;
