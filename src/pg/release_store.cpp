#include "release_store.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

extern "C" {
#include "access/detoast.h"
#include "executor/tuptable.h"
#include "mb/pg_wchar.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "utils/timestamp.h"
}

#include "release_key.h"
#include "settings.h"

namespace dp_pg {

namespace {

constexpr const char* kBaseDirectory = "dp_agg";
constexpr const char* kCacheDirectory = "dp_agg/release_cache";
constexpr char kMagic[8] = {'D', 'P', 'A', 'G', 'G', 'R', 'C', '\1'};
constexpr uint32 kVersion = 1;
constexpr std::size_t kCrcStart = 20;  // the CRC covers every byte from here on
// "dp_agg/release_cache/<OID>" fits easily.
constexpr std::size_t kDirectorySize = 64;

// The fixed part of an entry (no padding: every field at its natural
// alignment). times_reused is changed in place, outside the CRC.
struct FileHeader {
  char magic[8];
  int64 times_reused;
  uint32 crc;
  uint32 version;
  unsigned char key[kReleaseKeyBytes];
  Oid database;
  Oid role;
  Oid current_user;
  int32 period_seconds;
  int64 period_index;
  TimestampTz stored_at;
  int64 rows;
  int64 row_bytes;
  int32 columns;
  uint32 query_length;
};
static_assert(sizeof(FileHeader) == 112, "FileHeader must have no padding");
static_assert(offsetof(FileHeader, version) == kCrcStart, "the CRC starts at version");

struct ColumnType {
  Oid type;
  int32 typmod;
};

void RoleDirectory(Oid role, char* path, std::size_t size) {
  snprintf(path, size, "%s/%u", kCacheDirectory, role);
}

void EntryPath(const StoredReleaseId& id, char* path, std::size_t size) {
  char hex[kDigestHexLength + 1];
  ReleaseKeyToHex(id.key, hex);
  snprintf(path, size, "%s/%u/%s", kCacheDirectory, id.role, hex);
}

// Creates `path` if it does not exist, and makes its entry in `parent`
// durable. Returns false (errno set) on failure.
bool EnsureDirectory(const char* path, const char* parent) {
  if (MakePGDirectory(path) == 0) {
    fsync_fname(parent, true);
    return true;
  }
  return errno == EEXIST;
}

bool ReadFully(int fd, char* buffer, std::size_t length) {
  std::size_t done = 0;
  while (done < length) {
    const ssize_t got = read(fd, buffer + done, length - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += static_cast<std::size_t>(got);
  }
  return true;
}

// The whole file at `path` (palloc'd), or nullptr with errno set.
char* ReadFile(const char* path, std::size_t* length) {
  const int fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
  if (fd < 0) return nullptr;
  struct stat status;
  if (fstat(fd, &status) != 0) {
    const int saved = errno;
    CloseTransientFile(fd);
    errno = saved;
    return nullptr;
  }
  *length = static_cast<std::size_t>(status.st_size);
  char* data = static_cast<char*>(palloc(*length + 1));
  const bool ok = ReadFully(fd, data, *length);
  const int saved = errno;
  CloseTransientFile(fd);
  if (!ok) {
    pfree(data);
    errno = saved != 0 ? saved : EIO;
    return nullptr;
  }
  return data;
}

// Whether `data` is a complete entry: magic, version, sizes and CRC.
bool EntryIsValid(const char* data, std::size_t length) {
  if (length < sizeof(FileHeader)) return false;
  FileHeader header;
  std::memcpy(&header, data, sizeof header);
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0 || header.version != kVersion ||
      header.columns < 0 || header.columns > MaxTupleAttributeNumber || header.rows < 0)
    return false;
  const std::size_t fixed =
      sizeof(FileHeader) + sizeof(ColumnType) * header.columns + header.query_length;
  if (fixed > length) return false;
  pg_crc32c crc;
  INIT_CRC32C(crc);
  COMP_CRC32C(crc, data + kCrcStart, length - kCrcStart);
  FIN_CRC32C(crc);
  if (!EQ_CRC32C(crc, header.crc)) return false;
  // Every row's length fits, and the rows fill the file exactly.
  std::size_t at = fixed;
  for (int64 i = 0; i < header.rows; ++i) {
    uint32 row_length;
    if (at + sizeof row_length > length) return false;
    std::memcpy(&row_length, data + at, sizeof row_length);
    at += sizeof row_length;
    if (row_length < SizeofMinimalTupleHeader || row_length > length - at) return false;
    at += row_length;
  }
  return at == length;
}

int64 CurrentUnixSeconds() {
  const TimestampTz now = GetCurrentTimestamp();
  return now / USECS_PER_SEC + (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY;
}

bool IsPastPeriod(const FileHeader& header, int64 now_seconds) {
  return header.period_seconds <= 0 || now_seconds / header.period_seconds != header.period_index;
}

void RemoveFile(const char* path) {
  if (unlink(path) != 0 && errno != ENOENT)
    ereport(WARNING, (errcode_for_file_access(),
                      errmsg("dp_agg: could not remove release cache file \"%s\": %m", path)));
}

// A buffered writer that computes the CRC of what it writes after kCrcStart.
struct EntryWriter {
  int fd;
  std::size_t written;
  pg_crc32c crc;
  StringInfoData buffer;
  bool failed;
};

void Flush(EntryWriter* writer) {
  std::size_t done = 0;
  while (!writer->failed && done < static_cast<std::size_t>(writer->buffer.len)) {
    const ssize_t put = write(writer->fd, writer->buffer.data + done, writer->buffer.len - done);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) {
      if (put == 0) errno = ENOSPC;
      writer->failed = true;
      break;
    }
    done += static_cast<std::size_t>(put);
  }
  resetStringInfo(&writer->buffer);
}

void Put(EntryWriter* writer, const void* data, std::size_t length) {
  const char* bytes = static_cast<const char*>(data);
  // The CRC covers what lies at or after kCrcStart in the file.
  if (writer->written + length > kCrcStart) {
    const std::size_t skip = writer->written >= kCrcStart ? 0 : kCrcStart - writer->written;
    COMP_CRC32C(writer->crc, bytes + skip, length - skip);
  }
  appendBinaryStringInfo(&writer->buffer, bytes, static_cast<int>(length));
  writer->written += length;
  if (writer->buffer.len >= 65536) Flush(writer);
}

// Removes the role's entries of past periods, unreadable entries, temporary
// files of processes that are gone, and, beyond the bound, its oldest
// entries.
void BoundRoleEntries(Oid role) {
  char directory[kDirectorySize];
  RoleDirectory(role, directory, sizeof directory);
  DIR* dir = AllocateDir(directory);
  if (dir == nullptr) return;
  struct Kept {
    TimestampTz stored_at;
    char name[kDigestHexLength + 1];
  };
  int kept_count = 0;
  int kept_size = 16;
  Kept* kept = static_cast<Kept*>(palloc(sizeof(Kept) * kept_size));
  const int64 now = CurrentUnixSeconds();
  struct dirent* file;
  while ((file = ReadDir(dir, directory)) != nullptr) {
    if (file->d_name[0] == '.') continue;
    char path[MAXPGPATH];
    snprintf(path, sizeof path, "%s/%s", directory, file->d_name);
    const char* temporary = std::strstr(file->d_name, ".tmp");
    if (temporary != nullptr) {
      const long pid = std::strtol(temporary + 4, nullptr, 10);
      if (pid != MyProcPid &&
          (pid <= 0 || (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)))
        RemoveFile(path);
      continue;
    }
    if (std::strlen(file->d_name) != kDigestHexLength) continue;
    const int fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
    if (fd < 0) continue;
    FileHeader header;
    const bool read_ok = ReadFully(fd, reinterpret_cast<char*>(&header), sizeof header);
    CloseTransientFile(fd);
    if (!read_ok || std::memcmp(header.magic, kMagic, sizeof kMagic) != 0 ||
        IsPastPeriod(header, now)) {
      RemoveFile(path);
      continue;
    }
    if (kept_count == kept_size) {
      kept_size *= 2;
      kept = static_cast<Kept*>(repalloc(kept, sizeof(Kept) * kept_size));
    }
    kept[kept_count].stored_at = header.stored_at;
    strlcpy(kept[kept_count].name, file->d_name, sizeof kept[kept_count].name);
    ++kept_count;
  }
  FreeDir(dir);
  const int excess = kept_count - release_cache_max_entries;
  if (excess > 0) {
    qsort(kept, kept_count, sizeof(Kept), [](const void* a, const void* b) {
      const TimestampTz left = static_cast<const Kept*>(a)->stored_at;
      const TimestampTz right = static_cast<const Kept*>(b)->stored_at;
      return left < right ? -1 : left > right ? 1 : 0;
    });
    for (int i = 0; i < excess; ++i) {
      char path[MAXPGPATH];
      snprintf(path, sizeof path, "%s/%s", directory, kept[i].name);
      RemoveFile(path);
    }
  }
  pfree(kept);
}

}  // namespace

int64 PeriodIndexNow(int period_seconds) {
  return period_seconds > 0 ? CurrentUnixSeconds() / period_seconds : 0;
}

bool LoadStoredRelease(const StoredReleaseId& id, TupleDesc description, Tuplestorestate* rows,
                       TupleTableSlot* slot) {
  char path[MAXPGPATH];
  EntryPath(id, path, sizeof path);
  std::size_t length = 0;
  char* data = ReadFile(path, &length);
  if (data == nullptr) {
    if (errno != ENOENT)
      ereport(WARNING, (errcode_for_file_access(),
                        errmsg("dp_agg: could not read release cache file \"%s\": %m", path)));
    return false;
  }
  if (!EntryIsValid(data, length)) {
    ereport(WARNING, (errmsg("dp_agg: release cache file \"%s\" is damaged; removed", path)));
    RemoveFile(path);
    pfree(data);
    return false;
  }
  FileHeader header;
  std::memcpy(&header, data, sizeof header);
  if (std::memcmp(header.key, id.key, kReleaseKeyBytes) != 0 || header.role != id.role ||
      header.database != MyDatabaseId) {
    pfree(data);
    return false;
  }
  if (header.period_seconds != id.period_seconds || header.period_index != id.period_index) {
    // An entry of another period: found, so removed (a new release will
    // replace it in any case).
    if (IsPastPeriod(header, CurrentUnixSeconds())) RemoveFile(path);
    pfree(data);
    return false;
  }
  // The same key implies the same result types; checked all the same.
  bool same_types = header.columns == description->natts;
  const char* at = data + sizeof(FileHeader);
  for (int i = 0; same_types && i < header.columns; ++i) {
    ColumnType column;
    std::memcpy(&column, at + sizeof(ColumnType) * i, sizeof column);
    const Form_pg_attribute attribute = TupleDescAttr(description, i);
    same_types = column.type == attribute->atttypid;
  }
  if (!same_types || rows == nullptr) {
    pfree(data);
    return same_types;
  }
  at += sizeof(ColumnType) * header.columns + header.query_length;
  for (int64 i = 0; i < header.rows; ++i) {
    uint32 row_length;
    std::memcpy(&row_length, at, sizeof row_length);
    at += sizeof row_length;
    auto tuple = static_cast<MinimalTuple>(palloc(row_length));
    std::memcpy(tuple, at, row_length);
    at += row_length;
    tuple->t_len = row_length;
    ExecStoreMinimalTuple(tuple, slot, true);
    tuplestore_puttupleslot(rows, slot);
    ExecClearTuple(slot);
  }
  pfree(data);
  return true;
}

void CountStoredReuse(const StoredReleaseId& id) {
  char path[MAXPGPATH];
  EntryPath(id, path, sizeof path);
  const int fd = OpenTransientFile(path, O_RDWR | PG_BINARY);
  if (fd < 0) return;
  int64 count = 0;
  if (pread(fd, &count, sizeof count, offsetof(FileHeader, times_reused)) ==
      static_cast<ssize_t>(sizeof count)) {
    ++count;
    if (pwrite(fd, &count, sizeof count, offsetof(FileHeader, times_reused)) !=
        static_cast<ssize_t>(sizeof count))
      ereport(DEBUG1, (errmsg("dp_agg: could not count a reuse in \"%s\"", path)));
  }
  CloseTransientFile(fd);
}

bool StoreRelease(const StoredReleaseId& id, const char* query_text, TupleDesc description,
                  Tuplestorestate* rows, TupleTableSlot* slot) {
  char directory[kDirectorySize];
  RoleDirectory(id.role, directory, sizeof directory);
  if (!EnsureDirectory(kBaseDirectory, ".") || !EnsureDirectory(kCacheDirectory, kBaseDirectory) ||
      !EnsureDirectory(directory, kCacheDirectory)) {
    ereport(WARNING,
            (errcode_for_file_access(),
             errmsg("dp_agg: could not create the release cache directory \"%s\": %m", directory),
             errdetail("The answer was released and charged once; it cannot be reused.")));
    return false;
  }
  char path[MAXPGPATH];
  char temporary[MAXPGPATH + 16];
  EntryPath(id, path, sizeof path);
  snprintf(temporary, sizeof temporary, "%s.tmp%d", path, MyProcPid);

  // First pass: how many rows, how many bytes.
  FileHeader header;
  std::memset(&header, 0, sizeof header);
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.version = kVersion;
  std::memcpy(header.key, id.key, kReleaseKeyBytes);
  header.database = MyDatabaseId;
  header.role = id.role;
  header.current_user = GetUserId();
  header.period_seconds = id.period_seconds;
  header.period_index = id.period_index;
  header.stored_at = GetCurrentTimestamp();
  header.columns = description->natts;
  const char* text = query_text != nullptr ? query_text : "";
  header.query_length =
      static_cast<uint32>(pg_mbcliplen(text, static_cast<int>(strnlen(text, 4096)), 1000));
  tuplestore_rescan(rows);
  while (tuplestore_gettupleslot(rows, true, false, slot)) {
    bool should_free = false;
    MinimalTuple tuple = ExecFetchSlotMinimalTuple(slot, &should_free);
    header.rows += 1;
    header.row_bytes += tuple->t_len;
    if (should_free) pfree(tuple);
  }

  const int fd = OpenTransientFile(temporary, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
  if (fd < 0) {
    ereport(WARNING, (errcode_for_file_access(),
                      errmsg("dp_agg: could not create release cache file \"%s\": %m", temporary),
                      errdetail("The answer was released and charged once; it cannot be "
                                "reused.")));
    return false;
  }
  EntryWriter writer;
  writer.fd = fd;
  writer.written = 0;
  writer.failed = false;
  INIT_CRC32C(writer.crc);
  initStringInfo(&writer.buffer);
  Put(&writer, &header, sizeof header);
  for (int i = 0; i < description->natts; ++i) {
    const Form_pg_attribute attribute = TupleDescAttr(description, i);
    const ColumnType column{attribute->atttypid, attribute->atttypmod};
    Put(&writer, &column, sizeof column);
  }
  Put(&writer, text, header.query_length);
  tuplestore_rescan(rows);
  while (tuplestore_gettupleslot(rows, true, false, slot)) {
    bool should_free = false;
    MinimalTuple tuple = ExecFetchSlotMinimalTuple(slot, &should_free);
    const uint32 length = tuple->t_len;
    Put(&writer, &length, sizeof length);
    Put(&writer, tuple, length);
    if (should_free) pfree(tuple);
  }
  Flush(&writer);
  FIN_CRC32C(writer.crc);
  bool ok =
      !writer.failed && pwrite(fd, &writer.crc, sizeof writer.crc, offsetof(FileHeader, crc)) ==
                            static_cast<ssize_t>(sizeof writer.crc);
  ok = ok && pg_fsync(fd) == 0;
  const int saved = errno;
  CloseTransientFile(fd);
  pfree(writer.buffer.data);
  if (!ok) {
    errno = saved;
    ereport(WARNING, (errcode_for_file_access(),
                      errmsg("dp_agg: could not write release cache file \"%s\": %m", temporary),
                      errdetail("The answer was released and charged once; it cannot be "
                                "reused.")));
    RemoveFile(temporary);
    return false;
  }
  // Flushes the file again, renames it over the entry and flushes the
  // directory: the entry is on disk before the first row leaves.
  if (durable_rename(temporary, path, WARNING) != 0) {
    RemoveFile(temporary);
    return false;
  }
  BoundRoleEntries(id.role);
  return true;
}

namespace {

TimestampTz FromUnixSeconds(int64 seconds) {
  return (seconds - (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY) * USECS_PER_SEC;
}

// Calls `visit` with the path and the header of every readable entry of
// this database (of `role` when valid); the directory names are role OIDs.
template <typename Visit>
void ForEachEntry(Oid role, Visit visit) {
  DIR* roles = AllocateDir(kCacheDirectory);
  if (roles == nullptr) return;
  struct dirent* role_entry;
  while ((role_entry = ReadDir(roles, kCacheDirectory)) != nullptr) {
    char* end = nullptr;
    const unsigned long directory_role = std::strtoul(role_entry->d_name, &end, 10);
    if (role_entry->d_name[0] == '.' || end == role_entry->d_name || *end != '\0') continue;
    if (OidIsValid(role) && directory_role != role) continue;
    char directory[kDirectorySize];
    RoleDirectory(static_cast<Oid>(directory_role), directory, sizeof directory);
    DIR* files = AllocateDir(directory);
    if (files == nullptr) continue;
    struct dirent* file;
    while ((file = ReadDir(files, directory)) != nullptr) {
      if (std::strlen(file->d_name) != kDigestHexLength) continue;
      char path[MAXPGPATH];
      snprintf(path, sizeof path, "%s/%s", directory, file->d_name);
      std::size_t length = 0;
      char* data = ReadFile(path, &length);
      if (data == nullptr) continue;
      if (EntryIsValid(data, length)) {
        FileHeader header;
        std::memcpy(&header, data, sizeof header);
        if (header.database == MyDatabaseId) visit(path, header, data, length);
      }
      pfree(data);
    }
    FreeDir(files);
  }
  FreeDir(roles);
}

}  // namespace

void VisitStoredReleases(Oid role, StoredReleaseVisitor visit, void* context) {
  const int64 now = CurrentUnixSeconds();
  ForEachEntry(
      role, [&](const char*, const FileHeader& header, const char* data, std::size_t length) {
        if (IsPastPeriod(header, now)) return;
        StoredReleaseInfo entry;
        entry.role = header.role;
        entry.current_user = header.current_user;
        entry.period_start = FromUnixSeconds(header.period_index * header.period_seconds);
        entry.period_end = FromUnixSeconds((header.period_index + 1) * header.period_seconds);
        entry.stored_at = header.stored_at;
        entry.rows = header.rows;
        entry.bytes = static_cast<int64>(length);
        entry.times_reused = header.times_reused;
        char* query = pnstrdup(data + sizeof(FileHeader) + sizeof(ColumnType) * header.columns,
                               header.query_length);
        entry.query = query;
        visit(entry, context);
        pfree(query);
      });
}

int64 RemoveStoredReleases(Oid role) {
  int64 removed = 0;
  ForEachEntry(role, [&](const char* path, const FileHeader&, const char*, std::size_t) {
    if (unlink(path) == 0) ++removed;
  });
  return removed;
}

}  // namespace dp_pg
