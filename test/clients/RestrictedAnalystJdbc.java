// JDBC (pgjdbc) as a restricted dp_agg analyst: prepared statements with the
// epsilon as a bind parameter, also after pgjdbc switches to server-side
// prepared statements, DatabaseMetaData introspection, and refusal of a raw
// SELECT. Compiled and run by test/clients/run_clients.sh, which sets up the
// fixture and passes it in the environment:
//
//   PGHOST, PGPORT             the cluster (PGHOST a socket directory or a host name)
//   DP_CLIENTS_DB              database with the fixture
//   DP_CLIENTS_ROLE            the restricted analyst (LOGIN, no password: trust)
//   DP_CLIENTS_SUPERUSER       an unrestricted superuser
//   DP_CLIENTS_SCHEMA          schema of the protected table "patients"
//   DP_CLIENTS_ROWS            its number of rows
//   DP_CLIENTS_REGIONS         its regions, comma-separated
//   DP_CLIENTS_START_TIME      extract(epoch from pg_postmaster_start_time()) as
//                              psql saw it, to be sure JDBC reaches the same server
//   DP_CLIENTS_JDBC_TRANSPORT  auto (default), tcp or relay
//   DP_CLIENTS_SHAPES          test/clients/shapes.sql, the BI query shapes (its
//                              format is described there; parsed here as by shapes.py)
//
// pgjdbc speaks TCP only. With "tcp" it connects to PGHOST:PGPORT, or to
// localhost:PGPORT when PGHOST is a socket directory. With "relay" it connects
// to a loopback port of this process that forwards bytes to the server's Unix
// socket (JDK 16+ Unix-domain SocketChannel); the protocol between pgjdbc and
// the server is unchanged. "auto" uses TCP when the server answers there, else
// the relay.
//
// Output: one line per check, "ok - description" or "not ok - description",
// and diagnostics starting with "#". The caller numbers the checks. The exit
// status is 1 if any check failed.

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.ResultSetMetaData;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;

import org.postgresql.PGStatement;

public final class RestrictedAnalystJdbc {
    private static int failures = 0;

    private static void check(boolean passed, String description, String diagnostic) {
        System.out.println((passed ? "ok - " : "not ok - ") + "jdbc: " + description);
        if (!passed && diagnostic != null && !diagnostic.isEmpty()) {
            for (String line : diagnostic.split("\n")) {
                System.out.println("#   " + line);
            }
        }
        if (!passed) {
            failures++;
        }
        System.out.flush();
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isEmpty() ? fallback : value;
    }

    private static String describe(SQLException e) {
        return "SQLException SQLState=" + e.getSQLState() + ": " + e.getMessage();
    }

    // ---- transport -------------------------------------------------------

    // Forwards each accepted loopback connection to the server's Unix socket.
    // The channel is read and written directly: the streams of
    // java.nio.channels.Channels share one lock, so a blocked read would block
    // the write of the other direction.
    private static int startRelay(String socketPath) throws IOException {
        ServerSocket listener = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
        UnixDomainSocketAddress target = UnixDomainSocketAddress.of(socketPath);
        Thread acceptor = new Thread(() -> {
            while (true) {
                Socket client;
                try {
                    client = listener.accept();
                } catch (IOException e) {
                    return;
                }
                try {
                    SocketChannel server = SocketChannel.open(target);
                    InputStream fromClient = client.getInputStream();
                    OutputStream toClient = client.getOutputStream();
                    daemon(() -> {
                        byte[] buffer = new byte[65536];
                        int n;
                        while ((n = fromClient.read(buffer)) > 0) {
                            ByteBuffer chunk = ByteBuffer.wrap(buffer, 0, n);
                            while (chunk.hasRemaining()) {
                                server.write(chunk);
                            }
                        }
                    }, client, server);
                    daemon(() -> {
                        ByteBuffer buffer = ByteBuffer.allocate(65536);
                        while (server.read(buffer) > 0) {
                            toClient.write(buffer.array(), 0, buffer.position());
                            toClient.flush();
                            buffer.clear();
                        }
                    }, client, server);
                } catch (IOException e) {
                    try { client.close(); } catch (IOException ignored) { /* closing */ }
                }
            }
        });
        acceptor.setDaemon(true);
        acceptor.start();
        return listener.getLocalPort();
    }

    private interface Pump {
        void run() throws IOException;
    }

    // Runs one direction of a relayed connection; when it ends, closes both sides.
    private static void daemon(Pump pump, Socket client, SocketChannel server) {
        Thread t = new Thread(() -> {
            try {
                pump.run();
            } catch (IOException e) {
                // the other side closed
            }
            try { client.close(); } catch (IOException ignored) { /* closing */ }
            try { server.close(); } catch (IOException ignored) { /* closing */ }
        });
        t.setDaemon(true);
        t.start();
    }

    private static String url(String host, int port, String db) {
        return "jdbc:postgresql://" + host + ":" + port + "/" + db
            + "?connectTimeout=5&socketTimeout=60&ApplicationName=dp_agg_clients_jdbc";
    }

    private static Connection connect(String baseUrl, String user) throws SQLException {
        Properties props = new Properties();
        props.setProperty("user", user);
        return DriverManager.getConnection(baseUrl, props);
    }

    private static String startTime(Connection c) throws SQLException {
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(
                 "SELECT extract(epoch FROM pg_postmaster_start_time())::text")) {
            rs.next();
            return rs.getString(1);
        }
    }

    // ---- checks ----------------------------------------------------------

    public static void main(String[] args) throws Exception {
        String pgHost = env("PGHOST", "/tmp");
        int port = Integer.parseInt(env("PGPORT", "5432"));
        String db = env("DP_CLIENTS_DB", "dp_agg_clients");
        String role = env("DP_CLIENTS_ROLE", "dp_clients_analyst");
        String superuser = env("DP_CLIENTS_SUPERUSER", "postgres");
        String schema = env("DP_CLIENTS_SCHEMA", "clinic");
        long rows = Long.parseLong(env("DP_CLIENTS_ROWS", "0"));
        Set<String> regions = new LinkedHashSet<>(Arrays.asList(env("DP_CLIENTS_REGIONS", "").split(",")));
        String expectedStart = env("DP_CLIENTS_START_TIME", "");
        String transport = env("DP_CLIENTS_JDBC_TRANSPORT", "auto");
        String table = schema + ".patients";

        // Choose how to reach the server, and make sure it is the same server.
        String baseUrl = null;
        String how = null;
        String tcpHost = pgHost.startsWith("/") ? "localhost" : pgHost;
        List<String> tried = new ArrayList<>();
        if (!transport.equals("relay")) {
            String candidate = url(tcpHost, port, db);
            try (Connection c = connect(candidate, superuser)) {
                String seen = startTime(c);
                if (expectedStart.isEmpty() || expectedStart.equals(seen)) {
                    baseUrl = candidate;
                    how = "TCP " + tcpHost + ":" + port;
                } else {
                    tried.add("TCP " + tcpHost + ":" + port + " is another server (started at " + seen
                        + ", expected " + expectedStart + ")");
                }
            } catch (SQLException e) {
                tried.add("TCP " + tcpHost + ":" + port + ": " + describe(e));
            }
        }
        if (baseUrl == null && !transport.equals("tcp") && pgHost.startsWith("/")) {
            String socketPath = pgHost + "/.s.PGSQL." + port;
            try {
                int relayPort = startRelay(socketPath);
                String candidate = url("127.0.0.1", relayPort, db);
                try (Connection c = connect(candidate, superuser)) {
                    String seen = startTime(c);
                    if (expectedStart.isEmpty() || expectedStart.equals(seen)) {
                        baseUrl = candidate;
                        how = "a loopback relay to " + socketPath;
                    } else {
                        tried.add("relay reached another server");
                    }
                }
            } catch (IOException | SQLException e) {
                tried.add("relay to " + socketPath + ": " + e);
            }
        }
        check(baseUrl != null, "pgjdbc reaches the cluster" + (how == null ? "" : " over " + how),
            String.join("\n", tried));
        if (baseUrl == null) {
            System.exit(1);
        }
        System.out.println("# jdbc: pgjdbc " + org.postgresql.util.DriverInfo.DRIVER_VERSION + " over " + how);
        for (String attempt : tried) {
            System.out.println("# jdbc: not used: " + attempt);
        }

        try (Connection analyst = connect(baseUrl, role)) {
            preparedCount(analyst, table);
            preparedGroupBy(analyst, table, regions);
            metadata(analyst, schema);
            rawSelectRefused(analyst, table);
            shapes(analyst, schema, env("DP_CLIENTS_SHAPES", ""));
        } catch (SQLException e) {
            check(false, "connect as restricted role " + role, describe(e));
        }

        // Control: an unrestricted role still reads the table.
        try (Connection admin = connect(baseUrl, superuser);
             Statement st = admin.createStatement();
             ResultSet rs = st.executeQuery("SELECT * FROM " + table)) {
            long n = 0;
            while (rs.next()) {
                n++;
            }
            check(n == rows, "unrestricted " + superuser + " still reads SELECT * FROM " + table
                + " (" + n + " rows)", "expected " + rows + " rows, got " + n);
        } catch (SQLException e) {
            check(false, "unrestricted " + superuser + " still reads SELECT * FROM " + table, describe(e));
        }

        System.exit(failures == 0 ? 0 : 1);
    }

    // pgjdbc runs the first prepareThreshold - 1 executions (default 5) through
    // unnamed statements and then switches to a named server-side statement:
    // a separate code path on the server (a cached plan, Bind/Execute only).
    private static void preparedCount(Connection c, String table) {
        final int executions = 8;
        String sql = "SELECT dp_count(age, ?) FROM " + table;
        List<String> errors = new ArrayList<>();
        List<String> errorsLate = new ArrayList<>();
        boolean serverPrepared = false;
        int threshold = 5;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            PGStatement pg = ps.unwrap(PGStatement.class);
            threshold = pg.getPrepareThreshold();
            for (int i = 1; i <= executions; i++) {
                List<String> sink = i <= threshold ? errors : errorsLate;
                ps.setDouble(1, 1.0);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        sink.add("execution " + i + ": no row");
                        continue;
                    }
                    long value = rs.getLong(1);
                    if (rs.wasNull()) {
                        sink.add("execution " + i + ": NULL");
                    }
                    if (rs.next()) {
                        sink.add("execution " + i + ": more than one row");
                    }
                    if (i == 1) {
                        System.out.println("# jdbc: dp_count(age, 1.0) = " + value);
                    }
                } catch (SQLException e) {
                    sink.add("execution " + i + ": " + describe(e));
                }
                if (i > threshold) {
                    serverPrepared |= pg.isUseServerPrepare();
                }
            }
        } catch (SQLException e) {
            errors.add(describe(e));
        }
        check(errors.isEmpty(), "PreparedStatement " + sql + " with setDouble(1, 1.0): executions 1-"
            + threshold + " return one number", String.join("\n", errors));
        check(errorsLate.isEmpty(), "the same PreparedStatement, executions " + (threshold + 1) + "-"
            + executions + " (past prepareThreshold=" + threshold + ") return one number",
            String.join("\n", errorsLate));

        // The server itself lists the named statement once pgjdbc switched.
        String seen = "";
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(
                 "SELECT statement FROM pg_prepared_statements WHERE statement LIKE '%dp_count(age, $1)%'")) {
            if (rs.next()) {
                seen = rs.getString(1);
            }
        } catch (SQLException e) {
            seen = "(" + describe(e) + ")";
        }
        check(serverPrepared && seen.contains("dp_count"),
            "those executions used a server-side prepared statement (pg_prepared_statements)",
            "isUseServerPrepare=" + serverPrepared + ", pg_prepared_statements: " + seen);
    }

    private static void preparedGroupBy(Connection c, String table, Set<String> regions) {
        final int executions = 7;
        String sql = "SELECT region, dp_count(age, ?) AS n FROM " + table + " GROUP BY region ORDER BY region";
        List<String> errors = new ArrayList<>();
        Set<String> lastSeen = new LinkedHashSet<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 1; i <= executions; i++) {
                ps.setDouble(1, 1.0);
                lastSeen.clear();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        String region = rs.getString(1);
                        rs.getLong(2);
                        if (rs.wasNull() || !regions.contains(region)) {
                            errors.add("execution " + i + ": unexpected row (" + region + ", " + rs.getString(2) + ")");
                        }
                        lastSeen.add(region);
                    }
                } catch (SQLException e) {
                    errors.add("execution " + i + ": " + describe(e));
                }
            }
        } catch (SQLException e) {
            errors.add(describe(e));
        }
        // Each region has 200 rows: far above any partition-selection threshold
        // at epsilon 1, so every region must be released.
        if (errors.isEmpty() && !lastSeen.equals(regions)) {
            errors.add("last execution released regions " + lastSeen + ", expected " + regions);
        }
        check(errors.isEmpty(), "PreparedStatement " + sql + ", " + executions
            + " executions, return every (large) region with a number", String.join("\n", errors));
    }

    private static void metadata(Connection c, String schema) {
        try {
            DatabaseMetaData md = c.getMetaData();
            List<String> tables = new ArrayList<>();
            try (ResultSet rs = md.getTables(null, schema, "%", new String[] {"TABLE"})) {
                while (rs.next()) {
                    tables.add(rs.getString("TABLE_NAME") + ":" + rs.getString("TABLE_TYPE"));
                }
            }
            check(tables.contains("patients:TABLE"),
                "DatabaseMetaData.getTables(null, \"" + schema + "\", \"%\", {\"TABLE\"}) finds patients",
                "got " + tables);

            List<String> columns = new ArrayList<>();
            try (ResultSet rs = md.getColumns(null, schema, "patients", "%")) {
                while (rs.next()) {
                    columns.add(rs.getString("COLUMN_NAME") + " " + rs.getString("TYPE_NAME"));
                }
            }
            List<String> expected = Arrays.asList("id int4", "region text", "age int4", "income numeric",
                "admitted date", "last_visit timestamptz");
            check(columns.equals(expected),
                "DatabaseMetaData.getColumns(null, \"" + schema + "\", \"patients\", \"%\") lists its six columns",
                "got " + columns + ", expected " + expected);

            List<String> keys = new ArrayList<>();
            try (ResultSet rs = md.getPrimaryKeys(null, schema, "patients")) {
                while (rs.next()) {
                    keys.add(rs.getString("COLUMN_NAME"));
                }
            }
            check(keys.equals(List.of("id")), "DatabaseMetaData.getPrimaryKeys finds id", "got " + keys);
        } catch (SQLException e) {
            check(false, "DatabaseMetaData introspection of " + schema + ".patients", describe(e));
        }
    }

    private static void rawSelectRefused(Connection c, String table) {
        String sql = "SELECT * FROM " + table;
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            int n = 0;
            while (rs.next()) {
                n++;
            }
            check(false, sql + " throws SQLException", "it returned " + n + " rows");
        } catch (SQLException e) {
            String state = e.getSQLState();
            boolean refused = "42501".equals(state) || "0A000".equals(state);
            check(refused, sql + " throws SQLException with SQLState 42501 or 0A000"
                + (state == null ? "" : " (" + state + ")"), describe(e));
        }
        // The refusal leaves the connection usable (autocommit).
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT 1")) {
            check(rs.next() && rs.getInt(1) == 1, "the connection is usable after the refusal", null);
        } catch (SQLException e) {
            check(false, "the connection is usable after the refusal", describe(e));
        }
    }

    // ---- shapes.sql ------------------------------------------------------

    private static final class Shape {
        String name;
        String expect;        // "works" or "refused"
        String sqlState;      // for "refused"
        boolean todo;
        int minRows;
        int maxRows;
        BigDecimal low;       // null: no value check
        BigDecimal high;
        String only;          // null, "jdbc" or "odbc"
        List<String> escape = new ArrayList<>();  // clients that translate its {fn ...} escapes
        String plain;         // "-- plain:" the same question with built-in aggregates
        StringBuilder sql = new StringBuilder();

        String describe() {
            if (expect.equals("works")) {
                return "works (" + minRows + ".." + maxRows + " rows"
                    + (low == null ? "" : ", values in [" + low + ", " + high + "]") + ")";
            }
            return "refused with SQLSTATE " + sqlState + (todo ? " [TODO issue 13]" : "");
        }
    }

    // One file or several separated by ':' (shapes.sql and bi_statements.sql); a block's
    // "-- plain: SQL" line adds the shape NAME_plain with that SQL and the same expectations.
    private static List<Shape> parseShapes(String paths, String schema) throws IOException {
        List<Shape> shapes = new ArrayList<>();
        for (String path : paths.split(":")) {
            parseShapeFile(path, shapes);
        }
        List<Shape> plain = new ArrayList<>();
        for (Shape s : shapes) {
            if (s.plain != null) {
                Shape twin = new Shape();
                twin.name = s.name + "_plain";
                twin.expect = s.expect;
                twin.sqlState = s.sqlState;
                twin.todo = s.todo;
                twin.minRows = s.minRows;
                twin.maxRows = s.maxRows;
                twin.low = s.low;
                twin.high = s.high;
                twin.only = s.only;
                twin.escape = s.escape;
                twin.sql.append(s.plain);
                plain.add(twin);
            }
        }
        shapes.addAll(plain);
        return finishShapes(shapes, schema);
    }

    private static void parseShapeFile(String path, List<Shape> shapes) throws IOException {
        Shape current = null;
        for (String line : Files.readAllLines(Path.of(path), StandardCharsets.UTF_8)) {
            if (line.startsWith("-- shape: ")) {
                current = new Shape();
                current.name = line.substring("-- shape: ".length()).trim();
                shapes.add(current);
                continue;
            }
            if (current == null) {
                continue;
            }
            java.util.regex.Matcher m = java.util.regex.Pattern
                .compile("^-- (expect|rows|values|only|guidance|escape|plain): *(.*)$").matcher(line);
            if (m.matches() && m.group(1).equals("plain")) {
                current.plain = m.group(2).trim();
                continue;
            }
            if (m.matches()) {
                String[] valueAndNote = m.group(2).split("--", 2);
                String[] words = valueAndNote[0].trim().split("\\s+");
                switch (m.group(1)) {
                    case "expect":
                        current.expect = words[0];
                        current.sqlState = words[0].equals("refused") ? words[1] : null;
                        current.todo = valueAndNote.length > 1 && valueAndNote[1].contains("TODO");
                        break;
                    case "rows":
                        current.minRows = Integer.parseInt(words[0]);
                        current.maxRows = Integer.parseInt(words[1]);
                        break;
                    case "values":
                        current.low = new BigDecimal(words[0]);
                        current.high = new BigDecimal(words[1]);
                        break;
                    case "only":
                        current.only = words[0];
                        break;
                    case "escape":
                        current.escape = java.util.Arrays.asList(words);
                        break;
                    default:
                        break;   // guidance: checked by psycopg2, which sees the HINT
                }
                continue;
            }
            if (line.startsWith("--") || line.trim().isEmpty()) {
                continue;
            }
            current.sql.append(current.sql.length() == 0 ? "" : "\n").append(line);
        }
    }

    private static List<Shape> finishShapes(List<Shape> shapes, String schema) throws IOException {
        for (Shape s : shapes) {
            String sql = s.sql.toString().trim();
            if (sql.endsWith(";")) {
                sql = sql.substring(0, sql.length() - 1);
            }
            s.sql = new StringBuilder(sql.replace("@TABLE@", schema + ".patients").replace("@SCHEMA@", schema));
            if (s.expect == null || (s.expect.equals("refused") && s.sqlState == null)) {
                throw new IOException("shapes.sql: shape " + s.name + " lacks a valid expect line");
            }
        }
        return shapes;
    }

    // Null when the rows meet the shape's expectation, else why not.
    private static String judgeRows(Shape s, List<List<String>> rows) {
        if (s.expect.equals("refused")) {
            return "expected a refusal with SQLSTATE " + s.sqlState + ", got " + rows.size() + " rows: "
                + rows.subList(0, Math.min(5, rows.size()));
        }
        if (rows.size() < s.minRows || rows.size() > s.maxRows) {
            return "expected " + s.minRows + ".." + s.maxRows + " rows, got " + rows.size() + ": "
                + rows.subList(0, Math.min(5, rows.size()));
        }
        if (s.low != null) {
            for (List<String> row : rows) {
                String last = row.isEmpty() ? null : row.get(row.size() - 1);
                BigDecimal value;
                try {
                    value = last == null ? null : new BigDecimal(last.trim());
                } catch (NumberFormatException e) {
                    value = null;
                }
                if (value == null || value.compareTo(s.low) < 0 || value.compareTo(s.high) > 0) {
                    return "row " + row + ": last column not a number in [" + s.low + ", " + s.high + "]";
                }
            }
        }
        return null;
    }

    private static List<List<String>> readAll(ResultSet rs) throws SQLException {
        List<List<String>> rows = new ArrayList<>();
        ResultSetMetaData md = rs.getMetaData();
        while (rs.next()) {
            List<String> row = new ArrayList<>();
            for (int i = 1; i <= md.getColumnCount(); i++) {
                row.add(rs.getString(i));
            }
            rows.add(row);
        }
        return rows;
    }

    // Each SQL shape through a plain Statement, and the JDBC-only ones: getIndexInfo
    // is what DBeaver and other tools call to show a table's indexes.
    private static void shapes(Connection c, String schema, String path) {
        List<Shape> shapes;
        try {
            shapes = parseShapes(path, schema);
        } catch (IOException | RuntimeException e) {
            check(false, "read the query shapes from " + path + " (DP_CLIENTS_SHAPES)", e.toString());
            return;
        }
        for (Shape s : shapes) {
            if (s.only != null && !s.only.equals("jdbc")) {
                continue;
            }
            if (!s.escape.isEmpty() && !s.escape.contains("jdbc")) {
                continue;
            }
            String why;
            try {
                if (s.only != null) {
                    try (ResultSet rs = c.getMetaData().getIndexInfo(null, schema, "patients", false, true)) {
                        why = judgeRows(s, readAll(rs));
                    }
                } else {
                    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(s.sql.toString())) {
                        why = judgeRows(s, readAll(rs));
                    }
                }
            } catch (SQLException e) {
                if (s.expect.equals("works")) {
                    why = "expected it to work, got " + describe(e);
                } else if (!s.sqlState.equals(e.getSQLState())) {
                    why = "expected SQLSTATE " + s.sqlState + ", got " + describe(e);
                } else {
                    why = null;
                }
            }
            check(why == null, "shape " + s.name + " " + s.describe(), why);
        }
    }
}
