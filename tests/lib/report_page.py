#!/usr/bin/env python3
"""Reads a page of `mpquery report` (or chromium's --dump-dom of it) with
python3's html.parser, for tests/mpquery/report.sh and others:

  report_page.py FILE refs            every reference the page makes to
                                      something outside it, one a line
                                      (none: nothing printed; a data: URL
                                      is inside the page)
  report_page.py FILE addresses       every network or file address in
                                      the file's text, even in names
  report_page.py FILE balance         element counts that differ between
                                      start and end tags
  report_page.py FILE table ID [N]    the N-th table (from 0) under the
                                      element with that id, a row a line,
                                      cells joined by '|'
  report_page.py FILE flames          per flame graph: the id of its
                                      section, its frames, the root's value
                                      and the names of the frames (in
                                      document order)
  report_page.py FILE text ID         the text of the element with that id
  report_page.py FILE pre ID          the text of the <pre> under that id,
                                      as it is
  report_page.py FILE picture ID      the picture under that id (a data:
                                      URL), decoded
  report_page.py FILE ids             the ids of the sections and their
                                      parts, in order
"""
import re
import sys
from html.parser import HTMLParser

VOID = {'meta', 'link', 'br', 'img', 'input', 'hr', 'area', 'base', 'col', 'embed', 'source', 'track', 'wbr'}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    def text(self):
        return ''.join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self, tag=None):
        for c in self.children:
            if isinstance(c, Node):
                if tag is None or c.tag == tag:
                    yield c
                yield from c.iter(tag)

    def has_class(self, name):
        return name in self.attrs.get('class', '').split()


class Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node('#document', {}, None)
        self.cur = self.root
        self.starts, self.ends = {}, {}

    def handle_starttag(self, tag, attrs):
        self.starts[tag] = self.starts.get(tag, 0) + 1
        node = Node(tag, attrs, self.cur)
        self.cur.children.append(node)
        if tag in VOID:
            self.ends[tag] = self.ends.get(tag, 0) + 1
        else:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        self.starts[tag] = self.starts.get(tag, 0) + 1
        self.ends[tag] = self.ends.get(tag, 0) + 1
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        self.ends[tag] = self.ends.get(tag, 0) + 1
        node = self.cur
        while node is not self.root and node.tag != tag:
            node = node.parent
        if node is not self.root:
            self.cur = node.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def load(path):
    t = Tree()
    with open(path, encoding='utf-8') as f:   # fails on invalid UTF-8
        t.feed(f.read())
    t.close()
    return t


def refs(t):
    """References to something outside the page: what an attribute other
    than a tooltip (title) names, elements that load things, and url(),
    @import or an address in a style or script element."""
    out = []
    for n in t.root.iter():
        for k, v in n.attrs.items():
            v = v or ''
            if k == 'src' and n.tag == 'img' and v.startswith('data:'):
                continue
            if k in ('src', 'srcset', 'action', 'data', 'xlink:href', 'poster', 'background', 'formaction'):
                out.append(f'{n.tag} {k}={v}')
            elif k == 'href' and not v.startswith('#'):
                out.append(f'{n.tag} href={v}')
            elif k != 'title' and re.search(r'url\(|@import|https?:|javascript:', v):
                out.append(f'{n.tag} {k}={v}')
        if n.tag == 'img' and n.attrs.get('src', '').startswith('data:'):
            pass
        elif n.tag in ('link', 'img', 'iframe', 'frame', 'object', 'embed', 'image', 'use', 'audio', 'video',
                     'base', 'source', 'track', 'picture', 'foreignobject'):
            out.append(f'element {n.tag}')
        if n.tag in ('style', 'script'):
            for m in re.finditer(r'url\(|@import|@font-face|https?:', n.text()):
                out.append(f'{n.tag}: {n.text()[max(0, m.start() - 30):m.end() + 30]}')
    return out


def cell(td):
    return ' '.join(td.text().split())


def rows(table):
    for tr in table.iter('tr'):
        cells = [c for c in tr.children if isinstance(c, Node) and c.tag in ('td', 'th')]
        if cells:
            print('|'.join(cell(c) for c in cells))


def main():
    path, what, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    t = load(path)
    if what == 'refs':
        for r in refs(t):
            print(r)
    elif what == 'addresses':
        raw = open(path, encoding='utf-8').read()
        for m in re.finditer(r'https?:|(ftp|file)://|//[a-z0-9.-]+\.[a-z]{2,}/', raw):
            print(raw[max(0, m.start() - 30):m.end() + 30].replace('\n', ' '))
    elif what == 'balance':
        for tag in sorted(set(t.starts) | set(t.ends)):
            if t.starts.get(tag, 0) != t.ends.get(tag, 0):
                print(tag, t.starts.get(tag, 0), t.ends.get(tag, 0))
    elif what == 'table':
        el = [n for n in t.root.iter() if n.attrs.get('id') == args[0]][0]
        rows(list(el.iter('table'))[int(args[1]) if len(args) > 1 else 0])
    elif what == 'flames':
        for div in t.root.iter('div'):
            for svg in [c for c in div.children if isinstance(c, Node) and c.tag == 'svg' and c.has_class('flame')]:
                frames = [g for g in svg.iter('g') if g.has_class('f')]
                titles = [next(f.iter('title')).text() for f in frames]
                root = re.match(r'.* \((-?[0-9]+), [0-9.]+%\)$', titles[0]).group(1) if titles else '-'
                names = [re.sub(r' \(-?[0-9]+, [0-9.]+%\)$', '', x) for x in titles]
                print(div.attrs.get('id'), len(frames), root, ','.join(names))
    elif what == 'pre':
        el = [n for n in t.root.iter() if n.attrs.get('id') == args[0]][0]
        sys.stdout.write(next(el.iter('pre')).text())
    elif what == 'picture':
        import base64
        el = [n for n in t.root.iter() if n.attrs.get('id') == args[0]][0]
        src = next(el.iter('img')).attrs['src']
        sys.stdout.write(base64.b64decode(src.split(',', 1)[1]).decode('utf-8'))
    elif what == 'ids':
        for n in t.root.iter():
            if n.tag in ('section', 'div') and 'id' in n.attrs:
                print(n.attrs['id'])
    elif what == 'text':
        for n in t.root.iter():
            if n.attrs.get('id') == args[0]:
                print(' '.join(n.text().split()))
    else:
        sys.exit(f'report_page.py: unknown request {what}')


main()
