//! Forward error correction for the unreliable objects ([QPR §IV-E], QPR(F), Fig. 17):
//! the datagrams of an object are cut into blocks of at most `block` source symbols; each
//! block of `k` gets `⌈k × repair_pct / 100⌉` repair symbols of a Reed-Solomon code over
//! GF(2^8) (the `reed-solomon-erasure` crate), so any `k` of a block's `k + r` symbols give
//! back its `k` sources. The paper estimated the overhead from rQUIC ("an average overhead of
//! 10 % per segment" for QPR(F), 22 % for Q100(F) at its loss levels) and applied it on paper;
//! here the repair symbols are sent and decoded.
//!
//! A pure state machine: [`Fec`] says how an object is cut and names each symbol (its index
//! in the datagram header), [`encode_block`] makes a block's repair symbols, and [`Decoder`]
//! takes the symbols that arrive, in any order, and says when the object is whole.

use reed_solomon_erasure::galois_8::ReedSolomon;

/// A datagram index with this bit set carries a repair symbol: bits 8..31 the block, bits
/// 0..7 the repair symbol's number in its block. Without it, the index of a source symbol.
pub const REPAIR_BIT: u32 = 1 << 31;
/// GF(2^8) allows 256 symbols per block; a repair number fits in 8 bits.
pub const MAX_BLOCK_SYMBOLS: usize = 256;

/// How an object is protected: `block` source symbols per block, `repair_pct` repair symbols
/// per 100 sources (rounded up per block). `repair_pct` 0: no FEC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fec {
    pub block: usize,
    pub repair_pct: u32,
}

/// A symbol of an object, from its datagram index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Symbol {
    Source(u32),
    Repair { block: u32, number: u32 },
}

impl Symbol {
    pub fn from_index(index: u32) -> Symbol {
        if index & REPAIR_BIT == 0 {
            Symbol::Source(index)
        } else {
            Symbol::Repair {
                block: (index & !REPAIR_BIT) >> 8,
                number: index & 0xff,
            }
        }
    }

    pub fn index(self) -> u32 {
        match self {
            Symbol::Source(i) => i,
            Symbol::Repair { block, number } => REPAIR_BIT | (block << 8) | number,
        }
    }
}

impl Fec {
    /// None unless `block` ≥ 1 and a block with its repair symbols fits GF(2^8).
    pub fn new(block: usize, repair_pct: u32) -> Option<Fec> {
        let f = Fec { block, repair_pct };
        (block >= 1 && block + f.repair_for(block) <= MAX_BLOCK_SYMBOLS).then_some(f)
    }

    /// Repair symbols for a block of `k` sources.
    pub fn repair_for(&self, k: usize) -> usize {
        (k * self.repair_pct as usize).div_ceil(100)
    }

    /// (sources, repairs) of every block of an object of `sources` source symbols.
    pub fn blocks(&self, sources: usize) -> Vec<(usize, usize)> {
        (0..sources.div_ceil(self.block))
            .map(|b| {
                let k = self.block.min(sources - b * self.block);
                (k, self.repair_for(k))
            })
            .collect()
    }

    /// Every symbol of an object of `sources` source symbols, in the order a sender sends
    /// them: each block's sources, then its repair symbols.
    pub fn send_order(&self, sources: usize) -> Vec<Symbol> {
        let mut out = Vec::new();
        for (b, (k, r)) in self.blocks(sources).into_iter().enumerate() {
            let first = (b * self.block) as u32;
            out.extend((0..k as u32).map(|i| Symbol::Source(first + i)));
            out.extend((0..r as u32).map(|number| Symbol::Repair {
                block: b as u32,
                number,
            }));
        }
        out
    }
}

fn codec(k: usize, r: usize) -> Result<ReedSolomon, String> {
    ReedSolomon::new(k, r).map_err(|e| format!("Reed-Solomon ({k}, {r}): {e:?}"))
}

fn padded(s: &[u8], symbol_bytes: usize) -> Vec<u8> {
    let mut v = s.to_vec();
    v.resize(symbol_bytes, 0);
    v
}

/// The `r` repair symbols of one block's sources (each at most `symbol_bytes`; a shorter
/// one, an object's last, counts zero-padded).
pub fn encode_block(
    sources: &[&[u8]],
    r: usize,
    symbol_bytes: usize,
) -> Result<Vec<Vec<u8>>, String> {
    if r == 0 {
        return Ok(Vec::new());
    }
    if let Some(s) = sources.iter().find(|s| s.len() > symbol_bytes) {
        return Err(format!(
            "a source symbol of {} > {symbol_bytes} bytes",
            s.len()
        ));
    }
    let mut shards: Vec<Vec<u8>> = sources.iter().map(|s| padded(s, symbol_bytes)).collect();
    shards.extend((0..r).map(|_| vec![0u8; symbol_bytes]));
    codec(sources.len(), r)?
        .encode(&mut shards)
        .map_err(|e| format!("{e:?}"))?;
    Ok(shards.split_off(sources.len()))
}

#[derive(Debug)]
struct Block {
    k: usize,
    r: usize,
    /// sources 0..k, repairs k..k+r; None = not (yet) received
    shards: Vec<Option<Vec<u8>>>,
    have: usize,
}

/// The receiving side of one object: feed it every symbol that arrives ([`Decoder::on_symbol`]);
/// a block with any `k` of its symbols is recovered on [`Decoder::decode`].
#[derive(Debug)]
pub struct Decoder {
    fec: Fec,
    object_bytes: u64,
    symbol_bytes: usize,
    blocks: Vec<Block>,
}

impl Decoder {
    /// For an object of `object_bytes` cut into symbols of `symbol_bytes`.
    pub fn new(fec: Fec, object_bytes: u64, symbol_bytes: usize) -> Decoder {
        let sources = (object_bytes.div_ceil(symbol_bytes as u64) as usize).max(1);
        let blocks = fec
            .blocks(sources)
            .into_iter()
            .map(|(k, r)| Block {
                k,
                r,
                shards: vec![None; k + r],
                have: 0,
            })
            .collect();
        Decoder {
            fec,
            object_bytes,
            symbol_bytes,
            blocks,
        }
    }

    /// Records a symbol (its datagram index and payload); a duplicate changes nothing. Err if
    /// the index is not one of this object's symbols or the payload is too long.
    pub fn on_symbol(&mut self, index: u32, payload: &[u8]) -> Result<(), String> {
        if payload.len() > self.symbol_bytes {
            return Err(format!(
                "a symbol of {} > {} bytes",
                payload.len(),
                self.symbol_bytes
            ));
        }
        let sym = Symbol::from_index(index);
        let per_block = self.fec.block;
        let b = match sym {
            Symbol::Source(i) => i as usize / per_block,
            Symbol::Repair { block, .. } => block as usize,
        };
        // the block and the symbol's slot in it (sources 0..k, repairs k..k+r)
        let (block, slot) = self
            .blocks
            .get_mut(b)
            .and_then(|x| {
                let slot = match sym {
                    Symbol::Source(i) => Some(i as usize % per_block).filter(|&s| s < x.k),
                    Symbol::Repair { number, .. } => {
                        Some(x.k + number as usize).filter(|_| (number as usize) < x.r)
                    }
                }?;
                Some((x, slot))
            })
            .ok_or_else(|| format!("datagram index {index:#x} is not a symbol of this object"))?;
        if block.shards[slot].is_none() {
            block.shards[slot] = Some(padded(payload, self.symbol_bytes));
            block.have += 1;
        }
        Ok(())
    }

    /// True when every block has at least as many symbols as sources.
    pub fn recoverable(&self) -> bool {
        self.blocks.iter().all(|b| b.have >= b.k)
    }

    /// Symbols received so far (sources and repairs).
    pub fn received(&self) -> usize {
        self.blocks.iter().map(|b| b.have).sum()
    }

    /// Sources not received (rebuilt by [`Decoder::decode`] where their block allows).
    pub fn sources_missing(&self) -> usize {
        self.blocks
            .iter()
            .map(|b| b.shards[..b.k].iter().filter(|s| s.is_none()).count())
            .sum()
    }

    /// Symbols the sender sends for this object (sources and repairs).
    pub fn expected(&self) -> usize {
        self.blocks.iter().map(|b| b.k + b.r).sum()
    }

    /// Source bytes in hand: those received, plus every source of a recoverable block.
    pub fn source_bytes(&self) -> u64 {
        let mut n = 0u64;
        let mut first = 0u64;
        for b in &self.blocks {
            for i in 0..b.k {
                let start = (first + i as u64) * self.symbol_bytes as u64;
                let len = (self.object_bytes.saturating_sub(start)).min(self.symbol_bytes as u64);
                if b.have >= b.k || b.shards[i].is_some() {
                    n += len;
                }
            }
            first += b.k as u64;
        }
        n
    }

    /// The object's bytes, every lost source rebuilt; Err naming the first block with too
    /// few symbols.
    pub fn decode(&mut self) -> Result<Vec<u8>, String> {
        let mut out = Vec::with_capacity(self.object_bytes as usize);
        for (i, b) in self.blocks.iter_mut().enumerate() {
            if b.have < b.k {
                return Err(format!(
                    "block {i}: {} of {} + {} symbols",
                    b.have, b.k, b.r
                ));
            }
            if b.shards[..b.k].iter().any(Option::is_none) {
                codec(b.k, b.r)?
                    .reconstruct_data(&mut b.shards)
                    .map_err(|e| format!("{e:?}"))?;
            }
            for s in &b.shards[..b.k] {
                out.extend_from_slice(s.as_deref().expect("reconstructed"));
            }
        }
        out.truncate(self.object_bytes as usize);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An object of `bytes` with distinct content, cut into `per`-byte symbols.
    fn object(bytes: usize) -> Vec<u8> {
        (0..bytes).map(|i| (i * 31 % 251) as u8).collect()
    }

    /// Every symbol of `obj` as the sender sends it: (index, payload).
    fn send(fec: Fec, obj: &[u8], per: usize) -> Vec<(u32, Vec<u8>)> {
        let sources: Vec<&[u8]> = obj.chunks(per).collect();
        let mut repairs = Vec::new();
        for (b, (k, r)) in fec.blocks(sources.len()).into_iter().enumerate() {
            let s = &sources[b * fec.block..b * fec.block + k];
            repairs.push(encode_block(s, r, per).unwrap());
        }
        fec.send_order(sources.len())
            .into_iter()
            .map(|sym| {
                let p = match sym {
                    Symbol::Source(i) => sources[i as usize].to_vec(),
                    Symbol::Repair { block, number } => {
                        repairs[block as usize][number as usize].clone()
                    }
                };
                (sym.index(), p)
            })
            .collect()
    }

    #[test]
    fn blocks_and_indices() {
        let f = Fec::new(32, 22).unwrap();
        assert_eq!(f.repair_for(32), 8); // ⌈7.04⌉
        assert_eq!(f.repair_for(5), 2); // ⌈1.1⌉
        assert_eq!(f.blocks(70), vec![(32, 8), (32, 8), (6, 2)]);
        assert_eq!(
            Fec::new(32, 0).unwrap().blocks(70),
            vec![(32, 0), (32, 0), (6, 0)]
        );
        assert!(Fec::new(0, 10).is_none());
        assert!(Fec::new(200, 50).is_none()); // 200 + 100 > 256
        let order = f.send_order(70);
        assert_eq!(order.len(), 70 + 18);
        assert_eq!(order[31], Symbol::Source(31));
        assert_eq!(
            order[32],
            Symbol::Repair {
                block: 0,
                number: 0
            }
        );
        assert_eq!(order[40], Symbol::Source(32));
        for s in order {
            assert_eq!(Symbol::from_index(s.index()), s);
        }
    }

    #[test]
    fn any_k_of_a_block_give_the_object_back() {
        let (per, fec) = (100, Fec::new(8, 25).unwrap()); // 8 sources + 2 repairs per block
        let obj = object(2_050); // 21 symbols, the last 50 bytes: blocks 8+2, 8+2, 5+2
        let all = send(fec, &obj, per);
        assert_eq!(all.len(), 21 + 6);
        // lose two symbols of every block, sources and repairs alike, in a shuffled order
        let lost = [1usize, 8, 12, 16, 20, 26]; // positions in the send order
        let lost: Vec<u32> = lost.iter().map(|&i| all[i].0).collect();
        let mut d = Decoder::new(fec, obj.len() as u64, per);
        for (idx, p) in all.iter().rev().filter(|(i, _)| !lost.contains(i)) {
            d.on_symbol(*idx, p).unwrap();
        }
        assert!(d.recoverable());
        assert_eq!(d.sources_missing(), 4); // 1 of block 0, 2 of block 1, 1 of block 2
        assert_eq!(d.source_bytes(), obj.len() as u64);
        assert_eq!(d.decode().unwrap(), obj);
    }

    #[test]
    fn one_loss_too_many_is_not_recoverable_and_counts_only_what_arrived() {
        let (per, fec) = (100, Fec::new(8, 25).unwrap());
        let obj = object(1_600); // 16 symbols: blocks 8+2, 8+2
        let all = send(fec, &obj, per);
        let mut d = Decoder::new(fec, obj.len() as u64, per);
        // block 0 loses sources 0, 1 and 2 (three of 8 + 2); block 1 loses nothing
        for (idx, p) in all.iter().filter(|(i, _)| ![0u32, 1, 2].contains(i)) {
            d.on_symbol(*idx, p).unwrap();
            d.on_symbol(*idx, p).unwrap(); // a duplicate changes nothing
        }
        assert!(!d.recoverable());
        assert_eq!(d.received(), all.len() - 3);
        assert_eq!(d.expected(), all.len());
        assert_eq!(d.source_bytes(), 1_600 - 300);
        assert!(d.decode().unwrap_err().starts_with("block 0: 7 of 8 + 2"));
    }

    #[test]
    fn without_repair_every_source_is_needed() {
        let (per, fec) = (100, Fec::new(32, 0).unwrap());
        let obj = object(950);
        let all = send(fec, &obj, per);
        assert_eq!(all.len(), 10);
        let mut d = Decoder::new(fec, obj.len() as u64, per);
        for (idx, p) in &all[1..] {
            d.on_symbol(*idx, p).unwrap();
        }
        assert!(!d.recoverable());
        d.on_symbol(all[0].0, &all[0].1).unwrap();
        assert_eq!(d.decode().unwrap(), obj);
    }

    #[test]
    fn foreign_symbols_are_refused() {
        let mut d = Decoder::new(Fec::new(8, 25).unwrap(), 1_000, 100); // 10 sources: 8+2, 2+1
        assert!(d.on_symbol(10, &[0; 100]).is_err()); // no source 10
        assert!(d
            .on_symbol(
                Symbol::Repair {
                    block: 1,
                    number: 1
                }
                .index(),
                &[0; 100]
            )
            .is_err());
        assert!(d
            .on_symbol(
                Symbol::Repair {
                    block: 2,
                    number: 0
                }
                .index(),
                &[0; 100]
            )
            .is_err());
        assert!(d.on_symbol(0, &[0; 101]).is_err()); // too long
        assert!(d
            .on_symbol(
                Symbol::Repair {
                    block: 1,
                    number: 0
                }
                .index(),
                &[0; 100]
            )
            .is_ok());
    }
}
