#pragma once

#include "models/requestrecord.h"

#include <QJsonValue>
#include <QList>
#include <QString>

namespace loopscope {

// The JSON documents of one request in wire order (client request, each upstream request and
// response, the final response or the failure), with every secret masked: the Raw panel shows
// exactly these.
class RawSections {
public:
    struct Section {
        QString title;
        QJsonValue json;
    };

    static QList<Section> build(const RequestRecord &record);
    // SecretMasker's key rules (Authorization keeps its scheme) plus a value check: strings that
    // look like API keys or bearer tokens are masked wherever they sit, whatever their key is
    // called.
    static QJsonValue mask(const QJsonValue &value);
    static bool looksLikeSecret(const QString &text);
};

} // namespace loopscope
