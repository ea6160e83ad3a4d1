//! LAN–ATM gateways (buddhikot92's two-port ATM–FDDI gateway). [`wucs_sar`]: the
//! WUCS SAR protocol the gateway's SAR protocol processor runs (segmentation of MCHIP
//! segments into cells, per-connection reassembly with sequence checking).

pub mod wucs_sar;
