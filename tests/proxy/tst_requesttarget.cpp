// RequestTarget, the one place a request target is decoded and normalised: RFC 3986 5.2.4's
// remove_dot_segments on the RFC's own examples (5.2.4 and the merged paths of 5.4), the rules
// of requesttarget.h case by case, the re-encoding the proxy sends upstream, and the check of
// the final upstream path.
#include "http/requesttarget.h"

#include <QtTest>

using namespace loopscope;

class TstRequestTarget : public QObject {
    Q_OBJECT
private slots:
    void removeDotSegments_data() {
        QTest::addColumn<QByteArray>("input");
        QTest::addColumn<QByteArray>("output");
        QTest::addColumn<bool>("climbed");
        // RFC 3986 5.2.4's own two examples.
        QTest::newRow("5.2.4 absolute")
            << QByteArray("/a/b/c/./../../g") << QByteArray("/a/g") << false;
        QTest::newRow("5.2.4 relative")
            << QByteArray("mid/content=5/../6") << QByteArray("mid/6") << false;
        // 5.4: each reference merged with the base path /b/c/d;p, then dot segments removed.
        const struct {
            const char *reference;
            const char *merged;
            const char *result;
            bool climbed;
        } cases[] = {
            {"g", "/b/c/g", "/b/c/g", false},
            {"./g", "/b/c/./g", "/b/c/g", false},
            {"g/", "/b/c/g/", "/b/c/g/", false},
            {".", "/b/c/.", "/b/c/", false},
            {"./", "/b/c/./", "/b/c/", false},
            {"..", "/b/c/..", "/b/", false},
            {"../", "/b/c/../", "/b/", false},
            {"../g", "/b/c/../g", "/b/g", false},
            {"../..", "/b/c/../..", "/", true},
            {"../../", "/b/c/../../", "/", true},
            {"../../g", "/b/c/../../g", "/g", true},
            {"../../../g", "/b/c/../../../g", "/g", true},
            {"../../../../g", "/b/c/../../../../g", "/g", true},
            {"/./g", "/./g", "/g", false},
            {"/../g", "/../g", "/g", true},
            {"g.", "/b/c/g.", "/b/c/g.", false},
            {".g", "/b/c/.g", "/b/c/.g", false},
            {"g..", "/b/c/g..", "/b/c/g..", false},
            {"..g", "/b/c/..g", "/b/c/..g", false},
            {"./../g", "/b/c/./../g", "/b/g", false},
            {"./g/.", "/b/c/./g/.", "/b/c/g/", false},
            {"g/./h", "/b/c/g/./h", "/b/c/g/h", false},
            {"g/../h", "/b/c/g/../h", "/b/c/h", false},
            {"g;x=1/./y", "/b/c/g;x=1/./y", "/b/c/g;x=1/y", false},
            {"g;x=1/../y", "/b/c/g;x=1/../y", "/b/c/y", false},
        };
        for (const auto &c : cases)
            QTest::addRow("5.4 %s", c.reference)
                << QByteArray(c.merged) << QByteArray(c.result) << c.climbed;
        QTest::newRow("empty") << QByteArray() << QByteArray() << false;
        QTest::newRow("root") << QByteArray("/") << QByteArray("/") << false;
        QTest::newRow("leading ../ of a relative path")
            << QByteArray("../a") << QByteArray("a") << false;
        QTest::newRow("first segment removed") << QByteArray("/v1/..") << QByteArray("/") << true;
        QTest::newRow("empty segments stay")
            << QByteArray("/v1//a/../b") << QByteArray("/v1//b") << false;
    }
    void removeDotSegments() {
        QFETCH(QByteArray, input);
        QFETCH(QByteArray, output);
        QFETCH(bool, climbed);
        bool up = !climbed;
        QCOMPARE(RequestTarget::removeDotSegments(input, &up), output);
        QCOMPARE(up, climbed);
        QCOMPARE(RequestTarget::removeDotSegments(input), output);
    }

    void validTargets_data() {
        QTest::addColumn<QByteArray>("raw");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QByteArray>("encodedPath");
        QTest::addColumn<QByteArray>("query");
        auto row = [](const char *name, const char *raw, const QString &path, const char *encoded,
                      const char *query) {
            QTest::newRow(name) << QByteArray(raw) << path << QByteArray(encoded)
                                << QByteArray(query);
        };
        row("responses", "/v1/responses", u"/v1/responses"_qs, "/v1/responses", "");
        row("file content", "/v1/files/file-abc/content", u"/v1/files/file-abc/content"_qs,
            "/v1/files/file-abc/content", "");
        row("root", "/", u"/"_qs, "/", "");
        row("query kept as sent", "/v1/files?purpose=a%2Fb&after=x%3Dy", u"/v1/files"_qs,
            "/v1/files", "purpose=a%2Fb&after=x%3Dy");
        row("query with brackets", "/v1/responses/r?include[]=a", u"/v1/responses/r"_qs,
            "/v1/responses/r", "include[]=a");
        row("empty query", "/v1/models?", u"/v1/models"_qs, "/v1/models", "");
        row("dot segment inside", "/v1/./responses", u"/v1/responses"_qs, "/v1/responses", "");
        row("dot-dot inside", "/v1/files/../responses", u"/v1/responses"_qs, "/v1/responses", "");
        row("trailing dot-dot", "/v1/files/..", u"/v1/"_qs, "/v1/", "");
        row("dots in names", "/v1/files/.hidden/a..b/...", u"/v1/files/.hidden/a..b/..."_qs,
            "/v1/files/.hidden/a..b/...", "");
        row("decoded once", "/v1/files/a%20b%41", u"/v1/files/a bA"_qs, "/v1/files/a%20b%41", "");
        row("encoded ? and #", "/v1/files/a%3Fb%23c", u"/v1/files/a?b#c"_qs, "/v1/files/a%3Fb%23c",
            "");
        row("%25 before a harmless pair", "/v1/files/x%2541", u"/v1/files/x%41"_qs,
            "/v1/files/x%2541", "");
        row("UTF-8", "/v1/caf%C3%A9", u"/v1/caf\u00e9"_qs, "/v1/caf%C3%A9", "");
        row("sub-delims and colon", "/v1/models/gemini:generate;a=b",
            u"/v1/models/gemini:generate;a=b"_qs, "/v1/models/gemini:generate;a=b", "");
    }
    void validTargets() {
        QFETCH(QByteArray, raw);
        QFETCH(QString, path);
        QFETCH(QByteArray, encodedPath);
        QFETCH(QByteArray, query);
        const RequestTarget target = RequestTarget::parse(raw);
        QVERIFY2(target.isValid(), qPrintable(target.error()));
        QCOMPARE(target.error(), QString());
        QCOMPARE(target.path(), path);
        QCOMPARE(target.encodedPath(), encodedPath);
        QCOMPARE(target.query(), query);
    }

    void refusedTargets_data() {
        QTest::addColumn<QByteArray>("raw");
        QTest::addColumn<QString>("reason"); // a word the error must name
        auto row = [](const char *name, const QByteArray &raw, const char *reason) {
            QTest::newRow(name) << raw << QString::fromLatin1(reason);
        };
        // The reproductions of the issue.
        row("dot-dot above /v1", "/v1/../../admin/keys", "..");
        row("encoded dot-dot", "/v1/%2e%2e/%2e%2e/admin/keys", "encoded dot");
        row("double-encoded dot-dot", "/v1/%252e%252e/%252e%252e/admin/keys", "double-encoded");
        row("dot-dot above the root", "/../../../etc/passwd", "..");
        // Dot segments leaving the first segment.
        row("first segment removed", "/v1/..", "..");
        row("first segment removed, then another", "/v1/../models", "..");
        row("above the root at once", "/..", "..");
        row("climb after a detour", "/v1/a/../../../x", "..");
        // Encodings.
        row("encoded dot, upper case", "/v1/%2E%2E/x", "encoded dot");
        row("encoded dot in a name", "/v1/files/a%2ejson", "encoded dot");
        row("encoded slash", "/v1/files/a%2fb", "encoded slash");
        row("encoded slash, upper case", "/v1/files/a%2Fb", "encoded slash");
        row("encoded backslash", "/v1/files/a%5Cb", "encoded backslash");
        row("encoded NUL", "/v1/files/a%00b", "control");
        row("encoded CRLF", "/v1/files/a%0d%0aX-Injected:1", "control");
        row("encoded DEL", "/v1/files/a%7f", "control");
        row("double-encoded slash", "/v1/files/a%252fb", "double-encoded");
        row("triple-encoded dot", "/v1/%25252e%25252e/x", "double-encoded");
        row("double-encoded via encoded digits", "/v1/%25%32%65%25%32%65/x", "double-encoded");
        row("malformed escape", "/v1/files/a%zz", "escape");
        row("truncated escape", "/v1/files/a%4", "escape");
        row("not UTF-8", "/v1/files/%ff%fe", "UTF-8");
        // Raw bytes that have no place in a path.
        row("backslash", "/v1\\..\\..\\admin", "backslash");
        row("control byte",
            QByteArray("/v1/a\x01"
                       "b"),
            "control");
        row("tab", "/v1/a\tb", "control");
        row("NUL", QByteArray("/v1/a\0b", 7), "control");
        row("non-ASCII byte", "/v1/caf\xc3\xa9", "non-ASCII");
        row("quote", "/v1/a\"b", "percent-encode");
        // Forms other than origin-form.
        row("absolute-form", "http://evil/x", "forward prox");
        row("absolute-form https", "https://api.openai.com/v1/responses", "forward prox");
        row("authority-form", "evil:443", "CONNECT");
        row("asterisk-form", "*", "OPTIONS");
        row("relative", "v1/responses", "starting with /");
        row("empty", "", "empty");
        row("network-path", "//evil/x", "//");
        row("network-path after a dot segment", "/.//evil/x", "//");
        row("fragment", "/v1/responses#x", "fragment");
        // The query is not decoded, but must still be a query.
        row("query backslash", "/v1/files?a=b\\c", "query");
        row("query malformed escape", "/v1/files?a=%zz", "query");
        row("query control byte", QByteArray("/v1/files?a=\x7f"), "query");
    }
    void refusedTargets() {
        QFETCH(QByteArray, raw);
        QFETCH(QString, reason);
        const RequestTarget target = RequestTarget::parse(raw);
        QVERIFY(!target.isValid());
        QVERIFY2(target.error().contains(reason, Qt::CaseInsensitive), qPrintable(target.error()));
        QVERIFY(target.error().startsWith(QLatin1String("Invalid request target: ")));
        QCOMPARE(target.path(), QString());
        QCOMPARE(target.encodedPath(), QByteArray());
    }

    // What the proxy sends upstream decodes, once, to the path that was checked.
    void encodePathRoundTrips_data() {
        QTest::addColumn<QString>("decoded");
        QTest::addColumn<QByteArray>("encoded");
        QTest::newRow("plain") << u"/v1/files/file-abc/content"_qs
                               << QByteArray("/v1/files/file-abc/content");
        QTest::newRow("space") << u"/v1/files/a b"_qs << QByteArray("/v1/files/a%20b");
        QTest::newRow("question mark and hash")
            << u"/v1/files/a?b#c"_qs << QByteArray("/v1/files/a%3Fb%23c");
        QTest::newRow("percent") << u"/v1/files/x%41"_qs << QByteArray("/v1/files/x%2541");
        QTest::newRow("UTF-8") << u"/v1/caf\u00e9"_qs << QByteArray("/v1/caf%C3%A9");
        QTest::newRow("sub-delims")
            << u"/v1/models/m:g;a=b@c"_qs << QByteArray("/v1/models/m:g;a=b@c");
    }
    void encodePathRoundTrips() {
        QFETCH(QString, decoded);
        QFETCH(QByteArray, encoded);
        QCOMPARE(RequestTarget::encodePath(decoded), encoded);
        const RequestTarget again = RequestTarget::parse(encoded);
        QVERIFY2(again.isValid(), qPrintable(again.error()));
        QCOMPARE(again.path(), decoded);
    }

    void staysUnder_data() {
        QTest::addColumn<QByteArray>("path");
        QTest::addColumn<QByteArray>("base");
        QTest::addColumn<bool>("under");
        QTest::newRow("below") << QByteArray("/v1/responses") << QByteArray("/v1") << true;
        QTest::newRow("the base itself") << QByteArray("/v1") << QByteArray("/v1") << true;
        QTest::newRow("base with a slash") << QByteArray("/v1/x") << QByteArray("/v1/") << true;
        QTest::newRow("no base path") << QByteArray("/admin") << QByteArray() << true;
        QTest::newRow("deep base") << QByteArray("/openai/deployments/d/chat/completions")
                                   << QByteArray("/openai/deployments/d") << true;
        QTest::newRow("elsewhere") << QByteArray("/admin/keys") << QByteArray("/v1") << false;
        QTest::newRow("a longer sibling") << QByteArray("/v1x/a") << QByteArray("/v1") << false;
        QTest::newRow("dot-dot out") << QByteArray("/v1/../admin") << QByteArray("/v1") << false;
        QTest::newRow("dot-dot that stays")
            << QByteArray("/v1/a/../b") << QByteArray("/v1") << false;
        QTest::newRow("dot segment") << QByteArray("/v1/./a") << QByteArray("/v1") << false;
        QTest::newRow("encoded dots")
            << QByteArray("/v1/%2e%2e/admin") << QByteArray("/v1") << false;
        QTest::newRow("encoded slash") << QByteArray("/v1/a%2Fb") << QByteArray("/v1") << false;
        QTest::newRow("a query") << QByteArray("/v1/a?b") << QByteArray("/v1") << false;
    }
    void staysUnder() {
        QFETCH(QByteArray, path);
        QFETCH(QByteArray, base);
        QFETCH(bool, under);
        QCOMPARE(RequestTarget::staysUnder(path, base), under);
    }
};

QTEST_APPLESS_MAIN(TstRequestTarget)
#include "tst_requesttarget.moc"
