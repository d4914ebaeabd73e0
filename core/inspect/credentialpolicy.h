#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QPair>
#include <QReadWriteLock>
#include <QString>
#include <QStringList>
#include <QStringView>

#include <memory>

namespace loopscope {

// The one place that knows what a credential looks like, so that no secret's value is ever
// stored or shown (docs/security.md, "Secrets"): the names of headers and JSON keys that hold
// credentials, the configured secret values (upstream api keys, master key, control token, OTLP
// headers, sandbox tool tokens: set by the proxy's composition at each start), the client keys
// seen on requests, and common key formats (sk-…, sk-ant-…, AKIA…, ghp_…). A secret is shown
// as its last four characters ("…1234"), like the log always did.
//
// Thread-safe: masking reads an immutable snapshot (values and one compiled expression) that a
// registration replaces whole, so the proxy thread, the store thread, the OTLP thread and the
// window mask concurrently without holding a lock while they scan.
class CredentialPolicy {
public:
    CredentialPolicy();
    ~CredentialPolicy();
    CredentialPolicy(const CredentialPolicy &) = delete;
    CredentialPolicy &operator=(const CredentialPolicy &) = delete;

    // Shorter values are never matched in text ("…" alone would mask every short word).
    static constexpr qsizetype kMinSecretLength = 8;
    // Client keys remembered at most (the oldest is forgotten first).
    static constexpr qsizetype kMaxClientKeys = 64;

    // "sk-abcdef1234" -> "…1234"; shorter than 8 characters -> "…" only.
    static QString mask(const QString &secret);
    // "Bearer sk-…" header values keep the scheme: "Bearer …1234".
    static QString maskAuthorization(const QString &headerValue);
    // Values already in the masked shape ("…", "…abcd", "Bearer …abcd", joined by ", "), so
    // masking twice (publish, then import or export) changes nothing.
    static bool isMasked(const QString &value);
    // The one list of header names whose values are credentials (lower-case names).
    static bool isSecretHeader(QByteArrayView lowerName);
    // JSON keys that hold credentials (api_key, authorization, token, master_key, ...).
    static bool isSecretKey(const QString &key);
    // A policy with no registered values: key names and key formats only, for text that never
    // passed a live policy (a HAR file being imported, tests).
    static const CredentialPolicy &formatsOnly();

    // Changes whenever the secrets do (never 0): what was masked while it was current needs no
    // second look until it changes. Read it before masking, not after.
    quint64 generation() const;

    // Replaces the configured secrets (start and reload); client keys seen are kept.
    void setConfiguredSecrets(const QStringList &values);
    // A client's key, as a request presents it; cheap when already known.
    void addClientKey(const QString &key);
    QStringList knownSecrets() const;

    // Every occurrence of a known value or a key format replaced by its masked form.
    QString maskText(const QString &text) const;
    QByteArray maskText(const QByteArray &utf8) const;
    // Strings at any depth: values of secret-named keys masked whole, every other string masked
    // by maskText. What needs no masking is returned as it came (shared, not rebuilt).
    QJsonValue maskValue(const QJsonValue &value) const;
    // `masked` (may be null) tells whether anything was: when false the value is the one given.
    QJsonObject maskObject(const QJsonObject &object, bool *masked = nullptr) const;
    QJsonArray maskArray(const QJsonArray &array, bool *masked = nullptr) const;
    // False only when the JSON text `utf8` certainly parses to a value maskValue would return
    // unchanged: it holds no escape (so every string is its bytes), no name a secret key could
    // have ("key", "token", "authorization" in any case: isSecretKey's names all hold one), no
    // key format's mark and no known value. The recorder skips parsing-and-masking work for the
    // thousands of small events a stream holds; anything it cannot rule out is masked.
    bool mayNeedMasking(QByteArrayView utf8) const;
    // HTTP headers as a JSON object {lower-case name: value} (repeated names joined by ", "):
    // secret headers masked whole (authorization keeps its scheme), and so is any other value
    // that holds a known secret or a key format.
    QJsonObject maskHeaders(const QList<QPair<QByteArray, QByteArray>> &headers) const;
    QString maskHeaderValue(const QString &lowerName, const QString &value) const;

    // How many characters at the end of `text` might be the start of a secret that the next
    // chunk of the same stream completes: a live stream holds those back until it knows.
    qsizetype holdback(QStringView text) const;
    // Where `text` may be cut at `at` (or earlier) without cutting a secret in two.
    qsizetype safeCut(const QString &text, qsizetype at) const;

private:
    struct Snapshot;
    std::shared_ptr<const Snapshot> snapshot() const;
    void rebuild(); // under m_lock (write)

    mutable QReadWriteLock m_lock;
    std::shared_ptr<const Snapshot> m_current;
    quint64 m_generation = 0; // the last snapshot's (under m_lock)
    QStringList m_configured;
    QStringList m_clientKeys;
};

} // namespace loopscope
