#include "widgets/httpinspector.h"

#include "models/exchangemodel.h"
#include "models/sseeventsmodel.h"
#include "widgets/codeeditor.h"
#include "widgets/findbar.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QEvent>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QListView>
#include <QMenu>
#include <QSplitter>
#include <QStyle>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace loopscope {

using namespace Qt::StringLiterals;
using Format = CopyAsCommand::Format;

namespace {

const QList<Format> kFormats{Format::Curl, Format::PythonRequests, Format::PythonOpenAi,
                             Format::NodeFetch};

QTableWidget *keyValueTable(QWidget *parent, const QString &key, const QString &value) {
    auto *table = new QTableWidget(0, 2, parent);
    table->setHorizontalHeaderLabels({key, value});
    // The key column is sized by fitKeyColumn (at most 40 % of the width): sized to its
    // contents, a long header name squeezed the values into a column of single letters.
    table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Interactive);
    table->horizontalHeader()->setStretchLastSection(true);
    table->verticalHeader()->hide();
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setWordWrap(true);
    table->setTextElideMode(Qt::ElideMiddle);
    return table;
}

void fitKeyColumn(QTableWidget *table) {
    // The table's own width: its viewport is laid out after the table's resize event.
    const int width = table->width() - 2 * table->frameWidth();
    if (width > 0) {
        table->resizeColumnToContents(0);
        table->setColumnWidth(0, qMin(table->columnWidth(0), qMax(60, width * 2 / 5)));
    }
    table->resizeRowsToContents();
}

void fill(QTableWidget *table, const QList<QPair<QString, QString>> &rows) {
    table->setRowCount(int(rows.size()));
    for (qsizetype i = 0; i < rows.size(); ++i) {
        for (int column = 0; column < 2; ++column) {
            const QString text = column == 0 ? rows.at(i).first : rows.at(i).second;
            auto *item = new QTableWidgetItem(text);
            item->setToolTip(text); // an elided value is readable in full
            table->setItem(int(i), column, item);
        }
    }
    fitKeyColumn(table);
}

QString sizeText(qsizetype bytes) {
    return bytes < 1024 ? QObject::tr("%1 B").arg(bytes)
                        : QObject::tr("%1 KB").arg(double(bytes) / 1024.0, 0, 'f', 1);
}

} // namespace

HttpInspector::HttpInspector(QWidget *parent)
    : QWidget(parent)
    , m_exchange(new ExchangeModel(this))
    , m_events(new SseEventsModel(this))
    , m_summary(new QLabel(this))
    , m_timing(new QLabel(this))
    , m_copyBody(new QToolButton(this))
    , m_copyAs(new QToolButton(this))
    , m_wrap(new QToolButton(this))
    , m_hops(new QListView(this))
    , m_statusLine(new QLabel(this))
    , m_tabs(new QTabWidget(this))
    , m_headers(keyValueTable(this, tr("Header"), tr("Value")))
    , m_body(new CodeEditor(this))
    , m_eventsTable(new QTableView(this))
    , m_eventData(new CodeEditor(this))
    , m_timings(keyValueTable(this, tr("Timing"), tr("Value"))) {
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    // Labels wrap instead of being cut off; all of their text can be selected and copied.
    for (QLabel *label : {m_summary, m_timing, m_statusLine}) {
        label->setWordWrap(true);
        label->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
        label->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Minimum);
    }
    m_statusLine->setFont(mono);
    m_statusLine->setObjectName(u"statusLine"_s);

    m_copyBody->setText(tr("Copy body"));
    m_copyBody->setToolTip(tr("Copy the selected hop's body (pretty JSON, text or SSE)"));
    connect(m_copyBody, &QToolButton::clicked, this, &HttpInspector::copyBody);
    m_copyAs->setText(tr("Copy as"));
    m_copyAs->setToolTip(tr("Copy the client request as a command that re-sends it"));
    m_copyAs->setPopupMode(QToolButton::InstantPopup);
    auto *copyMenu = new QMenu(m_copyAs);
    for (Format format : kFormats)
        copyMenu->addAction(CopyAsCommand::formatName(format), this,
                            [this, format] { copyAs(format); });
    m_copyAs->setMenu(copyMenu);
    m_wrap->setText(tr("Wrap"));
    m_wrap->setCheckable(true);
    m_wrap->setToolTip(tr("Wrap long lines in the body and event data (Alt+Z in a pane)"));

    m_hops->setModel(m_exchange);
    m_hops->setTextElideMode(Qt::ElideRight); // each row's full text is its tooltip
    m_hops->setUniformItemSizes(true);
    m_hops->setContextMenuPolicy(Qt::CustomContextMenu);
    m_hops->setMinimumWidth(fontMetrics().horizontalAdvance(u'x') * 28);
    connect(m_hops->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) { showHop(current.row()); });

    m_eventsTable->setModel(m_events);
    m_eventsTable->verticalHeader()->hide();
    m_eventsTable->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_eventsTable->setSelectionMode(QAbstractItemView::SingleSelection);
    m_eventsTable->setWordWrap(false);
    m_eventsTable->horizontalHeader()->setStretchLastSection(true);
    m_eventsTable->horizontalHeader()->setSectionResizeMode(SseEventsModel::IndexColumn,
                                                            QHeaderView::ResizeToContents);
    m_eventsTable->horizontalHeader()->setSectionResizeMode(SseEventsModel::TimeColumn,
                                                            QHeaderView::ResizeToContents);
    m_eventsTable->horizontalHeader()->setSectionResizeMode(SseEventsModel::EventColumn,
                                                            QHeaderView::ResizeToContents);
    connect(m_eventsTable->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) { showSseEvent(current.row()); });

    FindBar *bodyFind = FindBar::attach(m_body);
    FindBar *eventFind = FindBar::attach(m_eventData);
    connect(m_wrap, &QToolButton::toggled, this, [bodyFind, eventFind](bool on) {
        bodyFind->setWrapEnabled(on);
        eventFind->setWrapEnabled(on);
    });
    connect(bodyFind->wrapAction(), &QAction::toggled, m_wrap, [this](bool on) {
        const QSignalBlocker block(m_wrap);
        m_wrap->setChecked(on);
    });
    // Ctrl+F on the hop list or a table finds in the body (widget-local: never ambiguous with
    // the panes' own Ctrl+F).
    for (QWidget *w : std::initializer_list<QWidget *>{m_hops, m_headers, m_eventsTable}) {
        auto *find = new QAction(tr("Find in body"), w);
        find->setShortcut(QKeySequence::Find);
        find->setShortcutContext(Qt::WidgetShortcut);
        connect(find, &QAction::triggered, this, [this, w, bodyFind, eventFind] {
            if (w == m_eventsTable) {
                eventFind->open();
                return;
            }
            m_tabs->setCurrentIndex(BodyTab);
            bodyFind->open();
        });
        w->addAction(find);
    }

    for (QWidget *w : std::initializer_list<QWidget *>{m_body, m_hops}) {
        w->setContextMenuPolicy(Qt::CustomContextMenu);
        connect(w, &QWidget::customContextMenuRequested, this, [this, w](const QPoint &pos) {
            QMenu *menu = contextMenu(this);
            if (w == m_body) {
                QMenu *standard = m_body->createStandardContextMenu();
                menu->insertActions(menu->actions().value(0), standard->actions());
                menu->insertSeparator(menu->actions().value(standard->actions().size()));
                standard->setParent(menu);
            }
            menu->setAttribute(Qt::WA_DeleteOnClose);
            menu->popup(w->mapToGlobal(pos));
        });
    }

    auto *eventsPage = new QSplitter(Qt::Vertical, this);
    eventsPage->addWidget(m_eventsTable);
    eventsPage->addWidget(m_eventData);
    eventsPage->setStretchFactor(0, 2);
    eventsPage->setStretchFactor(1, 1);
    m_headers->installEventFilter(this);
    m_tabs->addTab(m_headers, tr("Headers"));
    m_tabs->addTab(m_body, tr("Body"));
    m_tabs->addTab(eventsPage, tr("Events"));
    m_tabs->addTab(m_timings, tr("Timing"));
    m_tabs->setCurrentIndex(BodyTab);

    auto *right = new QWidget(this);
    auto *rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    rightLayout->addWidget(m_statusLine);
    rightLayout->addWidget(m_tabs, 1);

    m_splitter = new QSplitter(Qt::Horizontal, this);
    m_splitter->addWidget(m_hops);
    m_splitter->addWidget(right);
    m_splitter->setStretchFactor(0, 1);
    m_splitter->setStretchFactor(1, 3);
    m_splitter->setChildrenCollapsible(false);

    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_copyBody);
    buttons->addWidget(m_copyAs);
    buttons->addWidget(m_wrap);
    buttons->addStretch(1);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    layout->addWidget(m_timing);
    layout->addLayout(buttons);
    layout->addWidget(m_splitter, 1);

    setFlow({});
}

QPlainTextEdit *HttpInspector::bodyView() const {
    return m_body;
}

QPlainTextEdit *HttpInspector::eventDataView() const {
    return m_eventData;
}

QMenu *HttpInspector::contextMenu(QWidget *parent) const {
    auto *menu = new QMenu(parent);
    auto *self = const_cast<HttpInspector *>(this);
    menu->addAction(tr("Copy body"), self, &HttpInspector::copyBody);
    menu->addAction(tr("Copy status line"), self,
                    [self] { self->copyText(self->m_statusLine->text(), tr("the status line")); });
    menu->addSeparator();
    const bool hasRequest = m_exchange->rowOf(u"client_request"_s) >= 0;
    for (Format format : kFormats) {
        QAction *action = menu->addAction(tr("Copy as %1").arg(CopyAsCommand::formatName(format)),
                                          self, [self, format] { self->copyAs(format); });
        action->setEnabled(hasRequest);
    }
    menu->addSeparator();
    FindBar *bodyFind = FindBar::of(m_body);
    menu->addAction(tr("Find in body…"), self, [self, bodyFind] {
        self->m_tabs->setCurrentIndex(BodyTab);
        bodyFind->open();
    });
    menu->addAction(bodyFind->wrapAction());
    return menu;
}

void HttpInspector::setFlow(const QJsonObject &flow) {
    const bool sameFlow = !flow.isEmpty() && flow.value(u"id"_s) == m_flow.value(u"id"_s);
    const int keepRow = sameFlow ? currentHop() : -1;
    const int keepEvent = sameFlow ? m_eventsTable->currentIndex().row() : -1;
    m_flow = flow;
    m_exchange->setFlow(flow);
    updateSummary();
    m_copyBody->setEnabled(!flow.isEmpty());
    m_copyAs->setEnabled(m_exchange->rowOf(u"client_request"_s) >= 0);
    if (!sameFlow)
        fitHopList();
    if (m_exchange->rowCount() == 0) {
        showHop(-1);
        return;
    }
    int row = keepRow;
    if (row < 0 || row >= m_exchange->rowCount()) {
        // A new flow opens on what answers "what happened": the client's response when there
        // is one, else the newest hop.
        row = m_exchange->rowOf(u"client_response"_s);
        if (row < 0)
            row = m_exchange->rowCount() - 1;
    }
    if (row == currentHop()) {
        showHop(row); // same row, new content (live update)
        if (keepEvent >= 0 && keepEvent < m_events->rowCount())
            m_eventsTable->setCurrentIndex(m_events->index(keepEvent, 0));
    } else {
        selectHop(row);
    }
}

int HttpInspector::currentHop() const {
    return m_hops->currentIndex().row();
}

void HttpInspector::selectHop(int row) {
    if (row < 0 || row >= m_exchange->rowCount())
        return;
    m_hops->setCurrentIndex(m_exchange->index(row));
}

bool HttpInspector::selectHopOfKind(const QString &kind, int nth) {
    for (int row = 0; row < m_exchange->rowCount(); ++row) {
        if (m_exchange->hop(row).value(u"kind"_s).toString() == kind && nth-- == 0) {
            selectHop(row);
            return true;
        }
    }
    return false;
}

void HttpInspector::showEvent(QShowEvent *event) {
    QWidget::showEvent(event);
    fitHopList(); // a flow set while hidden had no width to fit to
    fitKeyColumn(m_headers);
}

bool HttpInspector::eventFilter(QObject *watched, QEvent *event) {
    // The Headers page gets its width only when its tab is shown or the panel resized.
    if (watched == m_headers && event->type() == QEvent::Resize)
        fitKeyColumn(m_headers);
    return QWidget::eventFilter(watched, event);
}

void HttpInspector::fitHopList() {
    // Room for the hop titles when the panel has it (at most half); narrower rows elide and
    // show their full text as a tooltip.
    const int total = m_splitter->width();
    const int need = m_hops->sizeHintForColumn(0) + 2 * m_hops->frameWidth() +
                     m_hops->style()->pixelMetric(QStyle::PM_ScrollBarExtent) + 8;
    const QList<int> sizes = m_splitter->sizes();
    if (total <= 0 || sizes.size() != 2 || sizes.first() >= need)
        return;
    const int left = qMin(need, total / 2);
    m_splitter->setSizes({left, total - left});
}

void HttpInspector::updateSummary() {
    if (m_flow.isEmpty()) {
        m_summary->setText(tr("Select a request to inspect its HTTP exchange."));
        m_timing->clear();
        return;
    }
    QStringList parts;
    parts << m_flow.value(u"method"_s).toString() % u' ' % m_flow.value(u"path"_s).toString();
    const int status = m_flow.value(u"status"_s).toInt();
    if (status > 0)
        parts << QString(QString::number(status) % u' ' % ExchangeModel::reasonPhrase(status))
                     .trimmed();
    parts << m_flow.value(u"state"_s).toString();
    parts << (m_flow.value(u"intercepted"_s).toBool() ? tr("intercepted") : tr("pass-through"));
    if (m_flow.value(u"stream"_s).toBool())
        parts << tr("streamed");
    if (const QString model = m_flow.value(u"model"_s).toString(); !model.isEmpty())
        parts << model;
    QString text = parts.join(u" · "_s);
    if (const QString reason = m_flow.value(u"incomplete_reason"_s).toString(); !reason.isEmpty())
        text += u'\n' % tr("Incomplete: %1").arg(reason);
    m_summary->setText(text);
    m_summary->setToolTip(m_flow.value(u"id"_s).toString());

    const QString state = m_flow.value(u"state"_s).toString();
    const bool running = state == u"running" || state == u"paused";
    m_timing->setText(
        tr("Total %1 · TTFB %2 · Loopscope overhead %3")
            .arg(running ? tr("running…")
                         : ExchangeModel::duration(m_flow.value(u"duration_ms"_s).toDouble()),
                 ExchangeModel::duration(m_flow.value(u"ttfb_ms"_s).toDouble()),
                 ExchangeModel::duration(m_flow.value(u"overhead_ms"_s).toDouble())));
}

void HttpInspector::showHop(int row) {
    const QJsonObject hop = m_exchange->hop(row);
    if (hop.isEmpty()) {
        m_statusLine->clear();
        m_headers->setRowCount(0);
        m_body->setPlainText(QString());
        m_events->setEvents({});
        m_eventData->setPlainText(QString());
        m_timings->setRowCount(0);
        m_tabs->setTabText(EventsTab, tr("Events"));
        m_tabs->setTabEnabled(EventsTab, false);
        return;
    }
    m_statusLine->setText(ExchangeModel::statusLine(hop, m_flow));
    fill(m_headers, ExchangeModel::headers(hop));
    m_tabs->setTabText(HeadersTab, tr("Headers (%1)").arg(m_headers->rowCount()));
    const QString body = ExchangeModel::bodyText(hop);
    if (m_body->toPlainText() != body)
        m_body->setPlainText(body);
    fill(m_timings, ExchangeModel::timings(hop, m_flow));

    const QJsonArray events = ExchangeModel::events(hop);
    m_events->setEvents(events, hop.value(u"at"_s).toDouble());
    // The store keeps event times only when the recorder has them: no empty Time column.
    const bool timed = std::any_of(events.begin(), events.end(), [](const QJsonValue &e) {
        return e.toObject().contains(u"at"_s);
    });
    m_eventsTable->setColumnHidden(SseEventsModel::TimeColumn, !timed);
    m_tabs->setTabText(EventsTab, tr("Events (%1)").arg(events.size()));
    // Leave the Events tab before disabling it (QTabWidget would jump to the next tab).
    if (events.isEmpty() && m_tabs->currentIndex() == EventsTab)
        m_tabs->setCurrentIndex(BodyTab);
    m_tabs->setTabEnabled(EventsTab, !events.isEmpty());
    if (events.isEmpty()) {
        m_eventData->setPlainText(QString());
    } else {
        m_eventsTable->setCurrentIndex(m_events->index(0, 0));
        // A streamed side has no body of its own: its events are what there is to read.
        if (hop.value(u"body"_s).isNull() && m_tabs->currentIndex() == BodyTab)
            m_tabs->setCurrentIndex(EventsTab);
    }
}

void HttpInspector::showSseEvent(int row) {
    if (row < 0 || row >= m_events->rowCount()) {
        m_eventData->setPlainText(QString());
        return;
    }
    const QJsonObject event = m_events->events().at(row).toObject();
    m_eventData->setPlainText(u"event: "_s % event.value(u"event"_s).toString(u"message"_s) %
                              u"\n\n" % SseEventsModel::decoded(event.value(u"data"_s)));
}

QString HttpInspector::bodyForCopy() const {
    const QJsonObject hop = m_exchange->hop(currentHop());
    if (hop.isEmpty())
        return {};
    const QJsonValue body = hop.value(u"body"_s);
    const QJsonArray events = ExchangeModel::events(hop);
    if ((body.isNull() || body.isUndefined()) && !events.isEmpty()) {
        // A streamed body is copied as the SSE text it was on the wire (re-framed).
        QString sse;
        for (const QJsonValue &e : events) {
            const QJsonObject event = e.toObject();
            const QJsonValue data = event.value(u"data"_s);
            const QString name = event.value(u"event"_s).toString(u"message"_s);
            if (name != u"message")
                sse += u"event: "_s % name % u'\n';
            sse += u"data: "_s %
                   (data.isObject()
                        ? QString::fromUtf8(
                              QJsonDocument(data.toObject()).toJson(QJsonDocument::Compact))
                        : SseEventsModel::decoded(data)) %
                   u"\n\n";
        }
        return sse;
    }
    if (hop.value(u"kind"_s).toString() != u"code_run" && (body.isNull() || body.isUndefined()))
        return {};
    return ExchangeModel::bodyText(hop);
}

QString HttpInspector::commandFor(Format format) const {
    return CopyAsCommand::forFlow(m_flow, format, m_baseUrl);
}

void HttpInspector::copyBody() {
    const QString text = bodyForCopy();
    if (text.isEmpty()) {
        emit statusMessage(tr("This hop has no body to copy."));
        return;
    }
    copyText(text, tr("the body (%1)").arg(sizeText(text.toUtf8().size())));
}

void HttpInspector::copyAs(Format format) {
    const QString text = commandFor(format);
    if (text.isEmpty()) {
        emit statusMessage(tr("This flow has no client request to copy."));
        return;
    }
    copyText(text, tr("the request as %1").arg(CopyAsCommand::formatName(format)));
}

void HttpInspector::copyText(const QString &text, const QString &what) {
    QApplication::clipboard()->setText(text);
    emit statusMessage(tr("Copied %1.").arg(what));
}

} // namespace loopscope
