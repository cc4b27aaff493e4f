#include "ledger_chain.h"

#include <openssl/evp.h>

namespace dp {

std::string CanonicalRecord(const char* tag, const RecordField* fields, std::size_t count) {
  std::string record(tag);
  record.push_back('\n');
  for (std::size_t i = 0; i < count; ++i) {
    record.append(fields[i].name);
    record.push_back('=');
    if (fields[i].value == nullptr) {
      record.push_back('-');
    } else {
      record.append(std::to_string(fields[i].length));
      record.push_back(':');
      record.append(fields[i].value, fields[i].length);
    }
    record.push_back('\n');
  }
  return record;
}

bool Sha256(const unsigned char* data, std::size_t length,
            unsigned char out[kChainDigestBytes]) noexcept {
  unsigned int written = 0;
  return EVP_Digest(data, length, out, &written, EVP_sha256(), nullptr) == 1 &&
         written == kChainDigestBytes;
}

bool RecordDigest(const char* tag, const RecordField* fields, std::size_t count,
                  unsigned char out[kChainDigestBytes]) {
  const std::string record = CanonicalRecord(tag, fields, count);
  return Sha256(reinterpret_cast<const unsigned char*>(record.data()), record.size(), out);
}

void HexEncode(const unsigned char* bytes, std::size_t length, char* out) noexcept {
  static const char kDigits[] = "0123456789abcdef";
  for (std::size_t i = 0; i < length; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0xf];
  }
  out[2 * length] = '\0';
}

}  // namespace dp
