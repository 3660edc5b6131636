//! TLS to PostgreSQL. `sslmode=require` in the URL (or `verify-ca`, `verify-full`, libpq's
//! stricter names) encrypts the connection with rustls and verifies the server's certificate
//! and name against the public roots, and the CA that `sslrootcert=/path/ca.pem` names (a
//! server with a certificate of its own). Stricter than libpq's `require`, which checks
//! nothing: an unverified connection can be read by whoever sits in between. Without
//! `sslmode=require` the connection stays unencrypted, as before.

use std::sync::Arc;

use postgres::config::SslMode;
use rustls_pki_types::{CertificateDer, pem::PemObject};
use tokio_postgres_rustls::MakeRustlsConnect;

/// How connections are made.
#[derive(Clone)]
pub(crate) enum Tls {
    Plain,
    Rustls(MakeRustlsConnect),
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Plain => "Tls::Plain",
            Self::Rustls(_) => "Tls::Rustls",
        })
    }
}

/// The configuration a URL describes and how to connect to it. The error says what is wrong
/// with the URL's TLS parameters.
pub(crate) fn parse_url(url: &str) -> Result<(postgres::Config, Tls), String> {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut root_cert = None;
    let mut kept: Vec<String> = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("sslrootcert", path)) => root_cert = Some(path.to_owned()),
            // `require` verifies as much as libpq's `verify-full` does.
            Some(("sslmode", "verify-ca" | "verify-full")) => kept.push("sslmode=require".into()),
            _ => kept.push(pair.to_owned()),
        }
    }
    let url = if kept.is_empty() { base.to_owned() } else { format!("{base}?{}", kept.join("&")) };
    let config: postgres::Config = url.parse().map_err(|e| format!("not a PostgreSQL URL: {e}"))?;
    if config.get_ssl_mode() != SslMode::Require {
        if root_cert.is_some() {
            return Err(
                "sslrootcert is used only with sslmode=require (or verify-ca, verify-full)".into(),
            );
        }
        return Ok((config, Tls::Plain));
    }
    let mut roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    if let Some(path) = &root_cert {
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
            .and_then(|certs| certs.collect::<Result<_, _>>())
            .map_err(|e| format!("sslrootcert={path}: cannot read its certificates: {e}"))?;
        if certs.is_empty() {
            return Err(format!("sslrootcert={path}: no certificate in it"));
        }
        for cert in certs {
            roots.add(cert).map_err(|e| format!("sslrootcert={path}: {e}"))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let client = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok((config, Tls::Rustls(MakeRustlsConnect::new(client))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_says_whether_and_how_to_encrypt() {
        let (config, tls) = parse_url("postgres://u@db.example.com/epimem").unwrap();
        assert!(matches!(tls, Tls::Plain));
        assert_eq!(config.get_dbname(), Some("epimem"));
        let (config, tls) =
            parse_url("postgres://u@db.example.com/epimem?sslmode=verify-full&application_name=x")
                .unwrap();
        assert!(matches!(tls, Tls::Rustls(_)));
        assert_eq!(config.get_ssl_mode(), SslMode::Require);
        let error = parse_url("postgres://u@h/d?sslrootcert=/nowhere.pem").unwrap_err();
        assert!(error.contains("only with sslmode=require"), "{error}");
        let error =
            parse_url("postgres://u@h/d?sslmode=require&sslrootcert=/nowhere.pem").unwrap_err();
        assert!(error.contains("/nowhere.pem"), "{error}");
    }
}
