//! Observers of a run ([`crate::observe`]): one file each. The scenario subscribes the
//! ones a run asks for; no model imports one.
//!
//! | observer        | subscribes to                         | what it gives |
//! |-----------------|---------------------------------------|---------------|
//! | [`cell_trace`]  | arrivals, departures, drops           | the cell trace (`[trace]`, `--cell-trace`) |
//! | [`wire_check`]  | PDUs, control cells                   | the byte-exact checking mode (`--check-wire`) |
//! | [`capture`]     | PDUs                                  | packet capture at hosts (`pcap`) |

pub mod capture;
pub mod cell_trace;
pub mod wire_check;
