#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QProcessEnvironment>
#include <QString>

#include <optional>

namespace loopscope {

// Where and how traces are exported (OTLP/HTTP). Sources, later ones winning per field: the
// standard OTEL_EXPORTER_OTLP_* environment, general_settings.otlp in the config, the
// --otlp-* options. Export is off while no endpoint is set.
struct OtlpSettings {
    enum class Protocol { Json, Protobuf };

    QString endpoint;  // base URL; traces go to {endpoint}/v1/traces
    QString tracesUrl; // a full traces URL (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), used as is
    QList<QPair<QByteArray, QByteArray>> headers;
    Protocol protocol = Protocol::Json;
    bool captureContent = false;

    bool enabled() const { return !endpoint.isEmpty() || !tracesUrl.isEmpty(); }
    // The URL the exporter POSTs to.
    QString url() const;

    // "http/json" | "http/protobuf"; nullopt otherwise (grpc is not spoken).
    static std::optional<Protocol> parseProtocol(const QString &text);
    static QString protocolName(Protocol protocol);
    // "K=V" (one --otlp-header); false when there is no '=' or the name is empty.
    static bool parseHeader(const QString &text, QPair<QByteArray, QByteArray> *header);
    // OTEL_EXPORTER_OTLP_HEADERS: "k1=v1,k2=v2" with percent-encoded values.
    static bool parseHeaderList(const QString &text, QList<QPair<QByteArray, QByteArray>> *out);

    // Fills the fields from the standard environment variables; the error text on bad input.
    bool applyEnvironment(const QProcessEnvironment &env, QString *error);
    // general_settings.otlp: {endpoint, headers: {k: v}, protocol, capture_content}; a header
    // value "os.environ/NAME" is read from the environment (LiteLLM's convention for secrets).
    bool applyConfig(const QJsonObject &otlp, const QProcessEnvironment &env, QString *error);
};

} // namespace loopscope
