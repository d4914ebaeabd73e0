// HarCodec::importHar (POST /loopscope/v1/import): any bytes as a HAR document. Invariants: an
// import either fails with a readable message or yields at most kMaxEntries flows, each with a
// fresh "req_" id, "imported":true and a hops array; authorization and api-key headers hold no
// word longer than a scheme ("Bearer") or a mask ("…abcd"); exporting the flows and importing that
// again keeps their number, paths and methods (Loopscope's own HAR round-trips).
#include "control/harcodec.h"
#include "fuzzsupport.h"

#include <QJsonArray>
#include <QJsonDocument>

using loopscope::HarCodec;
using loopscope::fuzz::FuzzInput;

namespace {

QString S(const char *text) {
    return QString::fromLatin1(text);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const QByteArray document = FuzzInput(data, size).all();
    const auto imported = HarCodec::importHar(document);
    if (!imported.ok()) {
        FUZZ_CHECK(!imported.error.isEmpty());
        return 0;
    }
    const QList<QJsonObject> &flows = imported.value;
    FUZZ_CHECK(flows.size() <= HarCodec::kMaxEntries);
    for (const QJsonObject &flow : flows) {
        FUZZ_CHECK(flow.value(S("id")).toString().startsWith(S("req_")));
        FUZZ_CHECK(flow.value(S("imported")).toBool());
        FUZZ_CHECK(flow.value(S("hops")).isArray());
        for (const QJsonValue &hop : flow.value(S("hops")).toArray()) {
            const QJsonObject headers = hop.toObject().value(S("headers")).toObject();
            for (auto it = headers.begin(); it != headers.end(); ++it) {
                const QString name = it.key().toLower();
                const QString value = it.value().toString();
                // A credential never comes back whole: masking keeps a short scheme word and
                // at most four characters of each value.
                if (name == S("authorization") || name == S("proxy-authorization") ||
                    name == S("x-api-key") || name == S("api-key")) {
                    for (const QString &piece : value.split(S(", ")))
                        for (const QString &word : piece.split(u' '))
                            FUZZ_CHECK(word.size() <= 16);
                }
            }
        }
    }
    const QJsonObject har = HarCodec::exportHar(flows, S("http://127.0.0.1:4000"), S("fuzz"));
    const auto again = HarCodec::importHar(QJsonDocument(har).toJson(QJsonDocument::Compact));
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(again.value.size() == flows.size());
    for (qsizetype i = 0; i < flows.size(); ++i) {
        FUZZ_CHECK(again.value.at(i).value(S("path")) == flows.at(i).value(S("path")));
        FUZZ_CHECK(again.value.at(i).value(S("method")) == flows.at(i).value(S("method")));
    }
    return 0;
}
