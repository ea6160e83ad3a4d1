//! LAN–ATM gateways (buddhikot92's two-port ATM–FDDI gateway). [`wucs_sar`]: the
//! WUCS SAR protocol the gateway's SAR protocol processor runs (segmentation of MCHIP
//! segments into cells, per-connection reassembly with sequence checking); [`spp`]:
//! the SPP's state tables and reassembly buffer; [`mpp`]: the SPP–MPP handshake and
//! the transmit buffer; [`atm_fddi`]: the `atm_fddi_gateway` kind.

pub mod atm_fddi;
pub mod mpp;
pub mod spp;
pub mod wucs_sar;
