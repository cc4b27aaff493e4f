// The ledger chain's canonical records and digests (src/core/ledger_chain.h).
#include "ledger_chain.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace {

dp::RecordField Field(const char* name, const char* value) {
  return dp::RecordField{name, value, value == nullptr ? 0 : std::strlen(value)};
}

std::string Hex(const unsigned char* bytes, std::size_t length) {
  std::string out(2 * length + 1, '\0');
  dp::HexEncode(bytes, length, &out[0]);
  out.resize(2 * length);
  return out;
}

TEST(LedgerChain, CanonicalRecordIsLengthPrefixed) {
  const dp::RecordField fields[] = {Field("kind", "charge"), Field("query_id", nullptr),
                                    Field("epsilon", "0.10"), Field("query", "")};
  EXPECT_EQ(dp::CanonicalRecord("tag v1", fields, 4),
            "tag v1\nkind=6:charge\nquery_id=-\nepsilon=4:0.10\nquery=0:\n");
}

TEST(LedgerChain, NullEmptyAndSeparatorsAreDistinct) {
  // A value containing the separators cannot imitate two fields.
  const dp::RecordField one[] = {Field("a", "1\nb=1:2")};
  const dp::RecordField two[] = {Field("a", "1"), Field("b", "2")};
  EXPECT_NE(dp::CanonicalRecord("t", one, 1), dp::CanonicalRecord("t", two, 2));
  const dp::RecordField null_value[] = {Field("a", nullptr)};
  const dp::RecordField empty_value[] = {Field("a", "")};
  const dp::RecordField dash_value[] = {Field("a", "-")};
  const std::string null_record = dp::CanonicalRecord("t", null_value, 1);
  EXPECT_NE(null_record, dp::CanonicalRecord("t", empty_value, 1));
  EXPECT_NE(null_record, dp::CanonicalRecord("t", dash_value, 1));
  // Bytes after a NUL are part of the value (length, not C string).
  const char with_nul[] = {'x', '\0', 'y'};
  const dp::RecordField binary[] = {{"a", with_nul, 3}};
  EXPECT_EQ(dp::CanonicalRecord("t", binary, 1), std::string("t\na=3:x\0y\n", 10));
}

TEST(LedgerChain, Sha256KnownAnswers) {
  unsigned char digest[dp::kChainDigestBytes];
  ASSERT_TRUE(dp::Sha256(reinterpret_cast<const unsigned char*>("abc"), 3, digest));
  EXPECT_EQ(Hex(digest, sizeof digest),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  ASSERT_TRUE(dp::Sha256(reinterpret_cast<const unsigned char*>(""), 0, digest));
  EXPECT_EQ(Hex(digest, sizeof digest),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(LedgerChain, RecordDigestIsSha256OfTheRecord) {
  const dp::RecordField fields[] = {Field("seq", "1"), Field("previous", nullptr)};
  unsigned char digest[dp::kChainDigestBytes];
  unsigned char expected[dp::kChainDigestBytes];
  ASSERT_TRUE(dp::RecordDigest("dp_agg ledger entry v1", fields, 2, digest));
  const std::string record = "dp_agg ledger entry v1\nseq=1:1\nprevious=-\n";
  ASSERT_TRUE(
      dp::Sha256(reinterpret_cast<const unsigned char*>(record.data()), record.size(), expected));
  EXPECT_EQ(Hex(digest, sizeof digest), Hex(expected, sizeof expected));
  // Any change of a value changes the digest.
  const dp::RecordField changed[] = {Field("seq", "2"), Field("previous", nullptr)};
  unsigned char other[dp::kChainDigestBytes];
  ASSERT_TRUE(dp::RecordDigest("dp_agg ledger entry v1", changed, 2, other));
  EXPECT_NE(Hex(digest, sizeof digest), Hex(other, sizeof other));
}

}  // namespace
