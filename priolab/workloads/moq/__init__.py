"""The `moq` workload (seeds/004): prioritised Media-over-QUIC live streaming."""
