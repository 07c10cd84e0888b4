PREFIX : <http://ex/>
WITH :g DELETE { ?s :p ?o } INSERT { ?s :q [ :r ?o ] . GRAPH :h { ?s :p ?o } } USING :u USING NAMED :n WHERE { ?s :p ?o } ;
DELETE WHERE { ?s :p ?o . GRAPH :g { ?s :q ?o } } ;
INSERT { ?s :x 1 } WHERE { ?s ?p ?o } ;
DELETE { ?s :x 1 } WHERE { ?s ?p ?o }
