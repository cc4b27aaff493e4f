// The canonical encoding and SHA-256 digests that chain the privacy ledger
// (README "A tamper-evident ledger").
//
// A ledger entry's hash is SHA-256 of its canonical record, which includes
// the hash of the entry before it; a budget's digest is SHA-256 of the
// canonical record of its row. The record is a byte string that depends only
// on the values, never on a session setting (the PostgreSQL layer turns each
// value into its canonical text first: exact numerics as the numeric's own
// text, timestamps as integer microseconds since 1970-01-01 00:00 UTC, ...):
//
//   record := tag "\n" field*
//   field  := name "=" "-" "\n"                      (SQL NULL)
//           | name "=" length ":" bytes "\n"         (length: decimal byte count)
//
// The length prefix makes the encoding unambiguous whatever the bytes are, and
// the tag names the record kind and its version ("dp_agg ledger entry v1"),
// so that a later version with other fields can never produce the record of
// an earlier one. An outside verifier can recompute it in a few lines.
#ifndef DP_AGG_CORE_LEDGER_CHAIN_H
#define DP_AGG_CORE_LEDGER_CHAIN_H

#include <cstddef>
#include <string>

namespace dp {

constexpr std::size_t kChainDigestBytes = 32;  // SHA-256

// One field of a record: its name and its canonical text, or no value
// (value == nullptr: SQL NULL).
struct RecordField {
  const char* name;
  const char* value;
  std::size_t length;
};

// The canonical record (may throw std::bad_alloc).
std::string CanonicalRecord(const char* tag, const RecordField* fields, std::size_t count);

// SHA-256 of `length` bytes at `data` into `out`, by OpenSSL. False if
// OpenSSL failed (then `out` is unspecified).
bool Sha256(const unsigned char* data, std::size_t length,
            unsigned char out[kChainDigestBytes]) noexcept;

// SHA-256 of the canonical record (may throw std::bad_alloc; false if
// OpenSSL failed).
bool RecordDigest(const char* tag, const RecordField* fields, std::size_t count,
                  unsigned char out[kChainDigestBytes]);

// Lower-case hexadecimal of `length` bytes into `out`, which has room for
// 2 * length + 1 characters (NUL-terminated).
void HexEncode(const unsigned char* bytes, std::size_t length, char* out) noexcept;

}  // namespace dp

#endif  // DP_AGG_CORE_LEDGER_CHAIN_H
