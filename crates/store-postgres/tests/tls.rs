//! `sslmode=require` against a server that speaks only TLS: the test server behind a relay that
//! answers PostgreSQL's SSLRequest, completes a TLS handshake with a certificate made for the
//! test, and passes the decrypted protocol on.

use std::{
    io::{self, Read, Write},
    net::{SocketAddr, TcpListener, TcpStream},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use epimem_store::Timeline;
use epimem_store_postgres::{PostgresStore, test_support::test_database};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// PostgreSQL's SSLRequest: length 8, code 80877103.
const SSL_REQUEST: [u8; 8] = [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];

/// A relay on loopback to `upstream` that accepts only TLS; counts the handshakes it completed.
fn tls_relay(
    upstream: SocketAddr,
    cert: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
) -> (SocketAddr, Arc<AtomicUsize>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = Arc::new(
        rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert], key)
            .unwrap(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let handshakes = Arc::new(AtomicUsize::new(0));
    let counted = handshakes.clone();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let (config, counted) = (config.clone(), counted.clone());
            std::thread::spawn(move || relay(client, upstream, config, &counted));
        }
    });
    (addr, handshakes)
}

fn relay(
    mut client: TcpStream,
    upstream: SocketAddr,
    config: Arc<rustls::ServerConfig>,
    handshakes: &AtomicUsize,
) -> io::Result<()> {
    let mut request = [0u8; 8];
    client.read_exact(&mut request)?;
    if request != SSL_REQUEST {
        return Ok(()); // a client that does not ask for TLS is hung up on
    }
    client.write_all(b"S")?;
    let mut tls = rustls::StreamOwned::new(
        rustls::ServerConnection::new(config).map_err(io::Error::other)?,
        client,
    );
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock)?;
    }
    handshakes.fetch_add(1, Ordering::SeqCst);
    let mut server = TcpStream::connect(upstream)?;
    let beat = Some(Duration::from_millis(2));
    tls.sock.set_read_timeout(beat)?;
    server.set_read_timeout(beat)?;
    let waiting =
        |e: &io::Error| matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match tls.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => server.write_all(&buf[..n])?,
            Err(e) if waiting(&e) => {}
            Err(e) => return Err(e),
        }
        match server.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => {
                tls.write_all(&buf[..n])?;
                tls.flush()?;
            }
            Err(e) if waiting(&e) => {}
            Err(e) => return Err(e),
        }
    }
}

/// The test database's URL with the relay in place of the server.
fn through(url: &str, relay: SocketAddr) -> String {
    let start = url.find('@').expect("a user in the URL") + 1;
    let end = start + url[start..].find('/').expect("a database in the URL");
    format!("{}{relay}{}", &url[..start], &url[end..])
}

fn upstream(url: &str) -> SocketAddr {
    let start = url.find('@').unwrap() + 1;
    let end = start + url[start..].find('/').unwrap();
    url[start..end].parse().expect("the test server is named by address")
}

#[test]
fn a_server_that_requires_tls_is_reached_with_sslmode_require_and_its_ca() {
    let Some(db) = test_database() else { return };
    let made =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".into(), "localhost".into()]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, made.cert.pem()).unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(made.signing_key.serialize_der()));
    let (relay, handshakes) = tls_relay(upstream(&db.url), made.cert.der().clone(), key);
    let url = format!("{}&sslmode=require&sslrootcert={}", through(&db.url, relay), ca.display());

    let store = PostgresStore::connect(&url).unwrap();
    assert!(store.tenants().unwrap().is_empty());
    assert!(handshakes.load(Ordering::SeqCst) >= 1);
    // libpq's stricter names mean the same here.
    let verify_full = url.replace("sslmode=require", "sslmode=verify-full");
    assert!(PostgresStore::connect(&verify_full).is_ok());

    // Without the CA the certificate is not trusted, and the error says what to add.
    let untrusted = format!("{}&sslmode=require", through(&db.url, relay));
    let error = PostgresStore::connect(&untrusted).unwrap_err().to_string();
    assert!(error.contains("certificate") && error.contains("sslrootcert="), "{error}");
    // A URL without sslmode=require does not ask for TLS, and this server wants nothing else.
    assert!(PostgresStore::connect(&through(&db.url, relay)).is_err());
}
