#pragma once

#include <QByteArray>
#include <QElapsedTimer>
#include <QList>
#include <QPair>
#include <QString>

namespace loopscope {

using HttpHeaders = QList<QPair<QByteArray, QByteArray>>;

// The first value of a header whose (lower-case) name is `lowerName`, or empty.
inline QByteArray headerValue(const HttpHeaders &headers, const QByteArray &lowerName) {
    for (const auto &h : headers)
        if (h.first == lowerName)
            return h.second;
    return {};
}

// One parsed HTTP/1.x request as the server hands it to its handler: the body is complete
// (de-chunked, within the size cap) and header names are lower-case.
struct HttpRequest {
    QByteArray method;   // "GET", "POST", ...
    QByteArray target;   // raw request target, e.g. "/v1/models?x=1"
    QString path;        // decoded path without query
    QByteArray query;    // raw query without '?', may be empty
    HttpHeaders headers; // names lower-case, values as sent, in order
    QByteArray body;
    int httpMinor = 1;
    // Started when the request was fully received: the origin of x-loopscope-overhead-ms.
    QElapsedTimer received;
    // Set only for a request the control API replays: the flow id it re-sends (the new flow's
    // summary carries it as "replay_of"). Never read from the wire.
    QString replayOf;

    QByteArray header(const QByteArray &lowerName) const { return headerValue(headers, lowerName); }
    bool hasHeader(const QByteArray &lowerName) const {
        for (const auto &h : headers)
            if (h.first == lowerName)
                return true;
        return false;
    }
};

} // namespace loopscope
