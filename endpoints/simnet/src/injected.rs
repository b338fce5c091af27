//! A node's sockets as quicsetup's injected network (`quicsetup::Net::Injected`): how a
//! program written against quicsetup binds its QUIC endpoint on simnet, in the sim site and
//! in the endpoints' virtual-time tests alike.

use crate::net::NodeNet;
use crate::quinn_runtime::SimQuinnRuntime;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

impl quicsetup::SocketFactory for NodeNet {
    fn bind(&self, addr: SocketAddr) -> io::Result<Arc<dyn quinn::AsyncUdpSocket>> {
        Ok(NodeNet::bind(self, addr)?)
    }

    fn runtime(&self) -> Arc<dyn quinn::Runtime> {
        Arc::new(SimQuinnRuntime)
    }
}
