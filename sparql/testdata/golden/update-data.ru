PREFIX : <http://ex/>
INSERT DATA { :a :p 1 ; :q _:b . GRAPH :g { :a :p "x" } } ;
DELETE DATA { :a :p 1 . GRAPH <http://g> { :a :p 2 } }
