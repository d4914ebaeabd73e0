#pragma once

#include "models/copyascommand.h"

#include <QJsonObject>
#include <QWidget>

class QLabel;
class QListView;
class QMenu;
class QPlainTextEdit;
class QSplitter;
class QTabWidget;
class QTableView;
class QTableWidget;
class QToolButton;

namespace loopscope {

class CodeEditor;
class ExchangeModel;
class SseEventsModel;

// The HTTP inspector: one flow (FlowQuery::flow JSON, any flow the store holds: intercepted,
// pass-through, rejected) as its hops — client request, each upstream request/response with
// its iteration, code runs, client response. For the selected hop: the status line, headers
// (as the store masked them), timings, the body (pretty JSON or text) and, for a streamed side,
// its SSE events as a table with each event's data decoded. Ctrl+F finds in the focused pane
// (FindBar), Wrap toggles line wrap. Copy body / copy as curl, Python or Node in the buttons
// and the right-click menus.
class HttpInspector : public QWidget {
    Q_OBJECT
public:
    enum Tab { HeadersTab, BodyTab, EventsTab, TimingTab };

    explicit HttpInspector(QWidget *parent = nullptr);

    const QJsonObject &flow() const { return m_flow; }
    // Where Loopscope listens ("http://127.0.0.1:4000"), used by "Copy as"; empty → the client
    // request's Host header.
    void setBaseUrl(const QString &url) { m_baseUrl = url; }
    QString baseUrl() const { return m_baseUrl; }

    int currentHop() const;
    void selectHop(int row);
    // Selects the nth hop of `kind` ("upstream_response"…); false when there is none.
    bool selectHopOfKind(const QString &kind, int nth = 0);

    // The text a copy action puts on the clipboard (also what it copies).
    QString bodyForCopy() const;
    QString commandFor(CopyAsCommand::Format format) const;

    // Parts, for tests and the lead's wiring.
    ExchangeModel *exchangeModel() const { return m_exchange; }
    SseEventsModel *eventsModel() const { return m_events; }
    QLabel *summaryLabel() const { return m_summary; }
    QLabel *timingLabel() const { return m_timing; }
    QListView *hopList() const { return m_hops; }
    QLabel *statusLineLabel() const { return m_statusLine; }
    QTabWidget *tabs() const { return m_tabs; }
    QTableWidget *headersTable() const { return m_headers; }
    QPlainTextEdit *bodyView() const;
    QTableView *eventsTable() const { return m_eventsTable; }
    QPlainTextEdit *eventDataView() const;
    QTableWidget *timingTable() const { return m_timings; }
    QToolButton *copyAsButton() const { return m_copyAs; }
    // The actions of the buttons and context menus (curl, Python requests, Python openai, Node).
    QMenu *contextMenu(QWidget *parent = nullptr) const;

public slots:
    // The full flow; an empty object clears. The same flow again (a live update) keeps the
    // selected hop and tab.
    void setFlow(const QJsonObject &flow);
    void copyBody();
    void copyAs(loopscope::CopyAsCommand::Format format);

signals:
    // One line for the status bar ("Copied the body (1.2 KB)").
    void statusMessage(const QString &text);

protected:
    void showEvent(QShowEvent *event) override;
    bool eventFilter(QObject *watched, QEvent *event) override; // header values stay readable

private:
    void showHop(int row);
    void showSseEvent(int row);
    void updateSummary();
    void copyText(const QString &text, const QString &what);
    void fitHopList();

    QJsonObject m_flow;
    QString m_baseUrl;
    ExchangeModel *m_exchange;
    SseEventsModel *m_events;
    QLabel *m_summary;
    QLabel *m_timing;
    QToolButton *m_copyBody;
    QToolButton *m_copyAs;
    QToolButton *m_wrap;
    QListView *m_hops;
    QSplitter *m_splitter = nullptr;
    QLabel *m_statusLine;
    QTabWidget *m_tabs;
    QTableWidget *m_headers;
    CodeEditor *m_body;
    QTableView *m_eventsTable;
    CodeEditor *m_eventData;
    QTableWidget *m_timings;
};

} // namespace loopscope
