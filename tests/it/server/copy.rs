//! COPY, MOVE and SWAPDB carry expiry times: what the differential cases cannot show without
//! waiting (Redis expires by its own clock), shown here by moving the test server's clock.

use echomq::testing::TestServer;

use super::Wire;

#[test]
fn copy_move_and_swapdb_carry_expiry_times() {
    let server = TestServer::start().unwrap();
    let mut wire = Wire::connect(&server);
    wire.expect(b"SET k v PX 1000\r\n", b"+OK\r\n");
    wire.expect(b"SET forever v\r\n", b"+OK\r\n");
    wire.expect(b"COPY k copied\r\n", b":1\r\n");
    wire.expect(b"COPY k elsewhere DB 2\r\n", b":1\r\n");
    wire.expect(b"COPY forever k2 DB 3\r\n", b":1\r\n");
    wire.expect(b"MOVE k 1\r\n", b":1\r\n");
    wire.expect(b"SWAPDB 2 4\r\n", b"+OK\r\n");
    server.advance_ms(999);
    wire.expect(b"GET copied\r\n", b"$1\r\nv\r\n");
    server.advance_ms(1);
    wire.expect(b"GET copied\r\n", b"$-1\r\n");
    wire.expect(b"GET forever\r\n", b"$1\r\nv\r\n");
    for (db, key) in [(1, "k"), (4, "elsewhere"), (2, "elsewhere")] {
        wire.expect(format!("SELECT {db}\r\n").as_bytes(), b"+OK\r\n");
        wire.expect(format!("GET {key}\r\n").as_bytes(), b"$-1\r\n");
        wire.expect(b"DBSIZE\r\n", b":0\r\n");
    }
    wire.expect(b"SELECT 3\r\n", b"+OK\r\n");
    wire.expect(b"GET k2\r\n", b"$1\r\nv\r\n");
}
