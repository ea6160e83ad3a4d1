//! Local area networks that attach to the ATM side through gateways. [`fddi`]: the
//! FDDI timed-token ring (ANSI X3.139 MAC) with its stations and a gateway station.

pub mod fddi;
